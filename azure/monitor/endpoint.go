package monitor

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	// For the Resource Manager endpoints and audiences of Azure's clouds,
	// which this package registers in package cloud.
	_ "github.com/Azure/azure-sdk-for-go/sdk/azcore/arm/runtime"
)

// DefaultEndpoint is Azure Resource Manager in Azure's public cloud.
const DefaultEndpoint = "https://management.azure.com"

// knownClouds are the clouds whose Resource Manager endpoint maps to a
// token audience other than the endpoint itself.
var knownClouds = []cloud.Configuration{cloud.AzurePublic, cloud.AzureChina, cloud.AzureGovernment}

// CheckEndpoint accepts a Resource Manager endpoint: an https URL with a
// host and nothing else (no user, path, query or fragment).
func CheckEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("invalid URL: %v", err)
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("must be an https URL, got scheme %q", u.Scheme)
	case u.Host == "":
		return errors.New("has no host")
	case u.User != nil, strings.Trim(u.Path, "/") != "", u.RawQuery != "", u.Fragment != "":
		return fmt.Errorf("must be the endpoint alone, such as %s, without a path, query or user", DefaultEndpoint)
	}
	return nil
}

// cloudFor is the cloud configuration the Resource Manager client gets for
// endpoint: Azure's own audience for the public, China and US Government
// endpoints (the Azure SDK's table), and the endpoint itself as the
// audience for any other, such as Azure Stack Hub's or a disconnected
// cloud's.
func cloudFor(endpoint string) cloud.Configuration {
	endpoint = strings.TrimRight(endpoint, "/")
	audience := endpoint
	for _, c := range knownClouds {
		rm := c.Services[cloud.ResourceManager]
		if strings.EqualFold(rm.Endpoint, endpoint) {
			audience = rm.Audience
		}
	}
	return cloud.Configuration{Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
		cloud.ResourceManager: {Endpoint: endpoint, Audience: audience},
	}}
}

// Audience is the token audience of a Resource Manager endpoint; a token
// for it is asked for with the scope Audience + "/.default".
func Audience(endpoint string) string {
	return cloudFor(endpoint).Services[cloud.ResourceManager].Audience
}
