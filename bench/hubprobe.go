package bench

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/config"
)

// ConnectionStringEnv names the environment variable an imported
// configuration reads the connection string from, so no output holds it.
const ConnectionStringEnv = "AZURE_SIGNALR_CONNECTION_STRING"

// importSchedule runs an imported search nightly: a capacity search loads
// the hub up to the file's last step, which few hubs should see hourly.
const importSchedule = "0 3 * * *"

// targetName names the one target of a mapped configuration.
const targetName = "benchmark"

// hubprobeFile is the hubprobe configuration a plan maps to, with only the
// keys the mapping sets; its tags are hubprobe's configuration keys.
type hubprobeFile struct {
	Targets   []hubprobeTarget   `yaml:"targets"`
	Scenarios []hubprobeScenario `yaml:"scenarios"`
}

type hubprobeTarget struct {
	Name             string `yaml:"name"`
	URL              string `yaml:"url,omitempty"`
	ConnectionString string `yaml:"connection_string,omitempty"`
	Hub              string `yaml:"hub,omitempty"`
}

type hubprobeScenario struct {
	Name               string                `yaml:"name"`
	Target             string                `yaml:"target"`
	Kind               string                `yaml:"kind"`
	Schedule           string                `yaml:"schedule"`
	Connections        int                   `yaml:"connections"`
	ConnectConcurrency int                   `yaml:"connect_concurrency"`
	MessageSize        int                   `yaml:"message_size"`
	SendInterval       time.Duration         `yaml:"send_interval"`
	GroupSize          int                   `yaml:"group_size,omitempty"`
	StreamItemDelay    time.Duration         `yaml:"stream_item_delay,omitempty"`
	Transport          string                `yaml:"transport"`
	Protocol           string                `yaml:"protocol"`
	Mode               string                `yaml:"mode"`
	CapacitySearch     config.CapacitySearch `yaml:"capacity_search"`
}

// hubprobeConfig renders the plan as a hubprobe configuration. connStr is
// what connection_string holds: the secret itself for a run (never
// printed), or a reference to ConnectionStringEnv for --import.
func (p *Plan) hubprobeConfig(connStr string) []byte {
	t := hubprobeTarget{Name: targetName, URL: p.URL}
	if p.ConnectionString != "" {
		t.ConnectionString, t.Hub = connStr, restHub
	}
	s := hubprobeScenario{
		Name: p.Name, Target: targetName, Kind: p.Kind, Schedule: importSchedule,
		Connections: p.Connections, ConnectConcurrency: p.ConnectConcurrency,
		MessageSize: p.MessageSize, SendInterval: p.SendInterval,
		GroupSize: p.GroupSize, StreamItemDelay: p.StreamItemDelay,
		Transport: p.Transport, Protocol: p.Protocol,
		Mode: config.ModeCapacitySearch, CapacitySearch: p.Search,
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	_ = enc.Encode(hubprobeFile{Targets: []hubprobeTarget{t}, Scenarios: []hubprobeScenario{s}}) // plain values cannot fail
	return buf.Bytes()
}

// hubprobe parses the plan's configuration with the secret in it, through
// the same loading and checks as `hubprobe check`.
func (p *Plan) hubprobe(kinds config.Kinds) (*config.Config, error) {
	return config.Parse(p.hubprobeConfig(string(p.ConnectionString)), p.File, kinds)
}

// Import writes the hubprobe configuration that runs the file's test as a
// scheduled capacity search. The connection string stays out of it.
func (p *Plan) Import(w io.Writer) error {
	head := []string{
		"# hubprobe configuration for " + p.File + ", a simple-mode file of the azure-signalr-bench repository.",
		"# The capacity search ramps as the file does and stops at the first step that breaks",
		"# hubprobe's capacity definition: more than 1 % of messages at 1 s or more (missing ones",
		"# included), more than 1 % of connections failed, or any throttling.",
	}
	if p.ConnectionFailShare != defaultFile.Config.ConnectionFailPercentage || p.SlowShare != defaultFile.Config.LatencyPercentage {
		head = append(head, "# The file's connectionFailPercentage and latencyPercentage do not carry over: the search's limits are 1 %.")
	}
	if p.ConnectionString != "" {
		head = append(head, "# Set "+ConnectionStringEnv+" to the file's connectionString before loading it.")
	}
	body := p.hubprobeConfig("${" + ConnectionStringEnv + "}")
	_, err := io.WriteString(w, strings.Join(head, "\n")+"\n"+string(body))
	return err
}

// benchKeys names the file's key behind each key of the mapped
// configuration, so a check that fails there points into the file.
var benchKeys = map[string]string{
	"targets[0].url":                             "config.webAppTarget",
	"targets[0].connection_string":               "config.connectionString",
	"scenarios[0].connections":                   "config.connections",
	"scenarios[0].connect_concurrency":           "config.arrivingRate",
	"scenarios[0].message_size":                  "scenario.parameters.messageSize",
	"scenarios[0].send_interval":                 "scenario.parameters.sendingInterval",
	"scenarios[0].group_size":                    "scenario.parameters.groupCount",
	"scenarios[0].stream_item_delay":             "scenario.parameters.streamingItemSendDelay",
	"scenarios[0].transport":                     "config.transport",
	"scenarios[0].protocol":                      "config.protocol",
	"scenarios[0].kind":                          "scenario.name",
	"scenarios[0].capacity_search.base_sending":  "config.baseSending",
	"scenarios[0].capacity_search.step":          "config.step",
	"scenarios[0].capacity_search.step_duration": "config.singleStepDuration",
	"scenarios[0].capacity_search.max_steps":     "config.sendingSteps",
}

// validate runs hubprobe's own checks on the mapped configuration (limits,
// URL, connection string) and turns a failure into an error at the file's
// key. The kinds are hubprobe's; the checker already picked a valid one.
func (c *checker) validate() error {
	_, err := c.plan.hubprobe(nil)
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		return err
	}
	key, ok := benchKeys[cerr.Key]
	if !ok {
		return c.ErrorAt(0, "", "cannot run as a hubprobe configuration: %s", cerr.Msg)
	}
	return c.Errorf(key, "hubprobe cannot run this value: %s", cerr.Msg)
}
