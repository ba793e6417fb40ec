// Package bench runs the configuration files of the azure-signalr-bench
// repository's v1 "simple" mode unchanged: it reads them strictly, with the
// benchmark's own keys and defaults, maps them onto hubprobe's scenario
// engine (a capacity search whose steps are the file's ramp and whose stop
// rule is the benchmark's), and prints the benchmark's report with
// hubprobe's exact figures beside it. It can also print the hubprobe
// configuration that runs the same test as a scheduled canary.
package bench

import (
	"errors"
	"strconv"
	"strings"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// File is a simple-mode benchmark file, keys spelt exactly as the
// benchmark reads them (case-sensitive camelCase).
type File struct {
	Mode     string   `yaml:"mode"`
	Kind     string   `yaml:"kind"`
	Config   Config   `yaml:"config"`
	Scenario Scenario `yaml:"scenario"`
}

// Config is the file's config: section. Durations are in milliseconds.
type Config struct {
	ConnectionString         config.Secret `yaml:"connectionString"`
	WebAppTarget             string        `yaml:"webAppTarget"`
	Transport                string        `yaml:"transport"`
	Protocol                 string        `yaml:"protocol"`
	ConnectionType           string        `yaml:"connectionType"`
	ArrivingRate             count         `yaml:"arrivingRate"`
	ArrivingBatchMode        string        `yaml:"arrivingBatchMode"`
	ArrivingBatchWait        count         `yaml:"arrivingBatchWait"`
	SingleStepDuration       count         `yaml:"singleStepDuration"`
	Connections              count         `yaml:"connections"`
	BaseSending              count         `yaml:"baseSending"`
	Step                     count         `yaml:"step"`
	SendingSteps             count         `yaml:"sendingSteps"`
	ConnectionFailPercentage float64       `yaml:"connectionFailPercentage"`
	LatencyPercentage        float64       `yaml:"latencyPercentage"`
	ResultFilePath           string        `yaml:"resultFilePath"`
	Debug                    flag          `yaml:"debug"`
}

// Scenario is the file's scenario: section.
type Scenario struct {
	Name       string     `yaml:"name"`
	Parameters Parameters `yaml:"parameters"`
}

// Parameters are the scenario's parameters; durations in milliseconds.
type Parameters struct {
	MessageSize            count `yaml:"messageSize"`
	SendingInterval        count `yaml:"sendingInterval"`
	GroupCount             count `yaml:"groupCount"`
	StreamingItemCount     count `yaml:"streamingItemCount"`
	StreamingItemSendDelay count `yaml:"streamingItemSendDelay"`
}

// defaultFile holds the benchmark's defaults, as its simple-mode model
// sets them; mode has none that counts (see checkMode).
var defaultFile = File{
	Kind: "perf",
	Config: Config{
		Transport: "Websockets", Protocol: "json", ConnectionType: "Core",
		ArrivingRate: 50, ArrivingBatchMode: "HighPress", ArrivingBatchWait: 1000,
		SingleStepDuration: 240000, Connections: 1000, BaseSending: 500, Step: 500,
		ConnectionFailPercentage: 0.01, LatencyPercentage: 0.01, ResultFilePath: "counters.txt",
	},
	Scenario: Scenario{
		Name:       "echo",
		Parameters: Parameters{MessageSize: 2048, SendingInterval: 1000, StreamingItemCount: 2},
	},
}

// count is one of the benchmark's unsigned integers. Only decimal digits
// (with "_" separators) without a leading 0 are taken: the benchmark's
// YAML library would read 0100 as octal 64, and also takes hexadecimal and
// base-60 forms, traps no example file sets.
type count uint32

func (c *count) ParseScalar(text string) error {
	digits := strings.ReplaceAll(text, "_", "")
	if digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 1 && digits[0] == '0' {
		return errors.New("not a decimal count")
	}
	n, err := strconv.ParseUint(digits, 10, 32)
	if err != nil {
		return err
	}
	*c = count(n)
	return nil
}

func (*count) Expected() string { return "a decimal whole number from 0 to 4294967295" }

// flag is one of the benchmark's booleans, which it reads as
// true/y/yes/on or false/n/no/off in any case.
type flag bool

func (f *flag) ParseScalar(text string) error {
	switch strings.ToLower(text) {
	case "true", "y", "yes", "on":
		*f = true
	case "false", "n", "no", "off":
		*f = false
	default:
		return errors.New("not a boolean")
	}
	return nil
}

func (*flag) Expected() string { return "true or false" }

// Load reads and checks the benchmark file at path; see Parse.
func Load(path string) (*Plan, error) {
	data, err := yamldecode.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes a benchmark file strictly and maps it onto hubprobe. Every
// error is a *yamldecode.Error naming the file, the line and the key: an
// unknown key, a value the benchmark would refuse, or one hubprobe cannot
// honour. Keys the benchmark knows but hubprobe does not use come back as
// the plan's warnings.
func Parse(data []byte, filename string) (*Plan, error) {
	d := yamldecode.New(filename)
	f := defaultFile
	found, err := d.Decode(data, &f)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, d.ErrorAt(0, "", "the file holds no YAML document")
	}
	if err := refuseEmpty(d); err != nil {
		return nil, err
	}
	c := &checker{Decoder: d, file: &f}
	return c.build(filename)
}

// refuseEmpty fails on the first key written without a value: the
// benchmark reads it as 0 (or null), where hubprobe's decoder would keep
// the default, so either reading would surprise someone.
func refuseEmpty(d *yamldecode.Decoder) error {
	key, line := "", 0
	for k, l := range d.EmptyKeys() {
		if key == "" || l < line {
			key, line = k, l
		}
	}
	if key == "" {
		return nil
	}
	return d.ErrorAt(line, key, "empty value: the benchmark reads it as 0 or null, not as its default; write a value or leave the key out")
}

// scenarioKinds maps the benchmark's scenario names onto hubprobe's kinds.
// The restPersist* names reach the service over a persistent server
// connection instead of REST calls; their deliveries are the same.
var scenarioKinds = map[string]string{
	"echo":                   "echo",
	"broadcast":              "broadcast",
	"sendToClient":           "send_to_client",
	"sendToGroup":            "send_to_group",
	"streamingEcho":          "streaming_echo",
	"restBroadcast":          "rest_broadcast",
	"restSendToUser":         "rest_send_to_user",
	"restSendToGroup":        "rest_send_to_group",
	"restPersistBroadcast":   "rest_broadcast",
	"restPersistSendToUser":  "rest_send_to_user",
	"restPersistSendToGroup": "rest_send_to_group",
}

// restHub is the hub name the benchmark's serverless scenarios use.
const restHub = "restbenchhub"
