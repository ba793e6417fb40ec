package monitor

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/hubprobe/hubprobe/tiers"
)

// The provider and resource types an Azure SignalR Service or Azure Web
// PubSub resource is named by in its ARM id.
const (
	provider          = "Microsoft.SignalRService"
	typeSignalR       = "SignalR"
	typeWebPubSub     = "WebPubSub"
	replicasSegment   = "replicas"
	resourceIDPattern = "/subscriptions/{id}/resourceGroups/{group}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}[/replicas/{replica}]"
)

// ResourceID is the Azure Resource Manager id of an Azure SignalR Service
// or Azure Web PubSub resource, or of one of its geo-replicas: what Azure
// Monitor's metrics are read for.
type ResourceID struct {
	Subscription, ResourceGroup string
	// Type is SignalR or WebPubSub, as Azure spells it.
	Type    string
	Name    string
	Replica string // empty for the primary resource
	raw     string
}

// String is the id as it was written (ARM ids are case-insensitive).
func (r ResourceID) String() string { return r.raw }

// Service is the hubprobe service the resource is: tiers.SignalR or
// tiers.WebPubSub.
func (r ResourceID) Service() string {
	if r.Type == typeWebPubSub {
		return tiers.WebPubSub
	}
	return tiers.SignalR
}

// ParseResourceID checks the shape of an ARM id of a SignalR or Web PubSub
// resource or replica. Its errors quote the part at fault: an id is not a
// secret.
func ParseResourceID(s string) (ResourceID, error) {
	seg := strings.Split(s, "/")
	if len(seg) != 9 && len(seg) != 11 || seg[0] != "" {
		return ResourceID{}, fmt.Errorf("must look like %s, got %q", resourceIDPattern, s)
	}
	seg = seg[1:]
	for i, want := range []string{"subscriptions", "resourceGroups", "providers"} {
		if !strings.EqualFold(seg[2*i], want) {
			return ResourceID{}, fmt.Errorf("segment %d must be %q, got %q (the id must look like %s)", 2*i+1, want, seg[2*i], resourceIDPattern)
		}
	}
	r := ResourceID{Subscription: seg[1], ResourceGroup: seg[3], raw: s}
	if err := r.checkProvider(seg[5], seg[6]); err != nil {
		return ResourceID{}, err
	}
	r.Name = seg[7]
	if len(seg) == 10 {
		if !strings.EqualFold(seg[8], replicasSegment) {
			return ResourceID{}, fmt.Errorf("segment 9 must be %q, got %q (the id must look like %s)", replicasSegment, seg[8], resourceIDPattern)
		}
		r.Replica = seg[9]
	}
	return r, r.checkNames()
}

func (r *ResourceID) checkProvider(prov, typ string) error {
	if !strings.EqualFold(prov, provider) {
		return fmt.Errorf("provider must be %s, got %q", provider, prov)
	}
	switch {
	case strings.EqualFold(typ, typeSignalR):
		r.Type = typeSignalR
	case strings.EqualFold(typ, typeWebPubSub):
		r.Type = typeWebPubSub
	default:
		return fmt.Errorf("resource type must be %s or %s, got %q", typeSignalR, typeWebPubSub, typ)
	}
	return nil
}

func (r ResourceID) checkNames() error {
	switch {
	case !isGUID(r.Subscription):
		return fmt.Errorf("subscription id %q is not a GUID", r.Subscription)
	case !validResourceGroup(r.ResourceGroup):
		return fmt.Errorf("resource group %q is not a valid name: 1 to 90 letters, digits, \"_\", \"-\", \".\", \"(\" or \")\", not ending in \".\"", r.ResourceGroup)
	case !validServiceName(r.Name):
		return fmt.Errorf("resource name %q is not a valid name: 3 to 63 letters, digits or \"-\", starting with a letter and ending with a letter or digit", r.Name)
	case r.Replica != "" && !validServiceName(r.Replica):
		return fmt.Errorf("replica name %q is not a valid name: 3 to 63 letters, digits or \"-\", starting with a letter and ending with a letter or digit", r.Replica)
	}
	return nil
}

// isGUID accepts the 8-4-4-4-12 hex form a subscription id takes.
func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

func validResourceGroup(s string) bool {
	n := len([]rune(s))
	if n == 0 || n > 90 || strings.HasSuffix(s, ".") {
		return false
	}
	return strings.IndexFunc(s, func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c) && !strings.ContainsRune("_-.()", c)
	}) < 0
}

// validServiceName is the rule Azure holds SignalR and Web PubSub resource
// and replica names to.
func validServiceName(s string) bool {
	if len(s) < 3 || len(s) > 63 || !isASCIILetter(rune(s[0])) {
		return false
	}
	last := rune(s[len(s)-1])
	if !isASCIILetter(last) && !isASCIIDigit(last) {
		return false
	}
	return strings.IndexFunc(s, func(c rune) bool { return !isASCIILetter(c) && !isASCIIDigit(c) && c != '-' }) < 0
}

func isASCIILetter(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isASCIIDigit(c rune) bool  { return c >= '0' && c <= '9' }
