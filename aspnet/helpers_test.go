package aspnet

import "encoding/json"

// jsonText is a raw JSON value, as decoders return them.
type jsonText = json.RawMessage
