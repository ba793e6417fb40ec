package webpubsub

// wireType is the value of a frame's "type" member.
type wireType uint8

const (
	typeNone wireType = iota
	typeOther
	typeJoinGroup
	typeLeaveGroup
	typeSendToGroup
	typeEvent
	typeSequenceAck
	typePing
	typeAck
	typeMessage
	typeSystem
	typePong
)

// wireTypeOf maps a "type" value to its code; typeOther when unknown.
func wireTypeOf(b []byte) wireType {
	switch string(b) {
	case "joinGroup":
		return typeJoinGroup
	case "leaveGroup":
		return typeLeaveGroup
	case "sendToGroup":
		return typeSendToGroup
	case "event":
		return typeEvent
	case "sequenceAck":
		return typeSequenceAck
	case "ping":
		return typePing
	case "ack":
		return typeAck
	case "message":
		return typeMessage
	case "system":
		return typeSystem
	case "pong":
		return typePong
	}
	return typeOther
}

// wireFrom is the value of a message frame's "from" member.
type wireFrom uint8

const (
	fromNone wireFrom = iota
	fromOther
	fromGroup
	fromServer
)

// fieldSet records which members a frame held, for the checks that need
// them once the type is known.
type fieldSet uint16

const (
	seenGroup fieldSet = 1 << iota
	seenEvent
	seenSuccess
	seenSequenceID
	seenConnectionID
	seenData
)

// member decodes the value of the member named key into f or into the
// walk's state; unknown members are skipped.
func (d *Decoder) member(key []byte, f *Frame) error {
	switch string(key) {
	case "type":
		return d.typeMember()
	case "from":
		return d.fromMember()
	case "group":
		return d.stringMember("group", &d.group, &f.Group, seenGroup)
	case "event":
		return d.stringMember("event", &d.event, &f.Event, seenEvent)
	case "fromUserId":
		return d.stringMember("fromUserId", &d.user, &f.FromUserID, 0)
	case "userId":
		return d.stringMember("userId", nil, &f.UserID, 0)
	case "connectionId":
		return d.stringMember("connectionId", nil, &f.ConnectionID, seenConnectionID)
	case "reconnectionToken":
		return d.stringMember("reconnectionToken", nil, &f.ReconnectionToken, 0)
	case "message":
		return d.stringMember("message", nil, &f.Message, 0)
	case "ackId":
		var err error
		f.AckID, f.HasAckID, err = d.uintValue("ackId", false)
		return err
	case "sequenceId":
		return d.sequenceIDMember(f)
	case "success":
		return d.boolMember("success", &f.Success, seenSuccess)
	case "noEcho":
		return d.boolMember("noEcho", &f.NoEcho, 0)
	case "dataType":
		return d.dataTypeMember()
	case "data":
		return d.dataMember()
	case "error":
		return d.errorMember(&f.Error)
	}
	_, err := d.s.SkipValue()
	return err
}

func (d *Decoder) typeMember() error {
	b, present, err := d.stringValue("type")
	if err != nil || !present {
		d.members.typ = typeNone
		return err
	}
	t := wireTypeOf(b)
	if t == typeOther {
		d.members.other = string(b)
	}
	d.members.typ = t
	return nil
}

func (d *Decoder) fromMember() error {
	b, present, err := d.stringValue("from")
	m := &d.members
	switch {
	case err != nil || !present:
		m.from = fromNone
	case string(b) == "group":
		m.from = fromGroup
	case string(b) == "server":
		m.from = fromServer
	default:
		m.from, m.other = fromOther, string(b)
	}
	return err
}

// mark records whether a member that a kind may require was present.
func (m *memberState) mark(seen fieldSet, present bool) {
	if present {
		m.seen |= seen
	} else {
		m.seen &^= seen
	}
}

// stringMember reads a string member into dst; with last set, through the
// name cache it points to.
func (d *Decoder) stringMember(name string, last, dst *string, seen fieldSet) error {
	b, present, err := d.stringValue(name)
	d.members.mark(seen, present)
	switch {
	case !present:
		*dst = ""
	case last != nil:
		*dst = intern(last, b)
	default:
		*dst = string(b)
	}
	return err
}

func (d *Decoder) boolMember(name string, dst *bool, seen fieldSet) error {
	v, present, err := d.boolValue(name)
	*dst = v
	d.members.mark(seen, present)
	return err
}

// sequenceIDMember accepts a number, or a string of digits: the reliable
// protocol's reference page writes the sequenceAck id in quotes.
func (d *Decoder) sequenceIDMember(f *Frame) error {
	n, present, err := d.uintValue("sequenceId", true)
	f.SequenceID = n
	d.members.mark(seenSequenceID, present)
	return err
}

func (d *Decoder) dataTypeMember() error {
	b, present, err := d.stringValue("dataType")
	m := &d.members
	m.hasDataType, m.dataTypeOther = false, ""
	if err != nil || !present {
		return err
	}
	m.hasDataType = true
	switch string(b) {
	case "json":
		m.dataType = DataTypeJSON
	case "text":
		m.dataType = DataTypeText
	case "binary":
		m.dataType = DataTypeBinary
	default:
		m.dataTypeOther = string(b)
	}
	return nil
}

// dataMember records where the data value lies; how to read it depends on
// dataType, which may come later in the frame.
func (d *Decoder) dataMember() error {
	s := &d.s
	m := &d.members
	m.dataPlain = false
	var err error
	if s.Peek() == '"' {
		start := s.Offset()
		_, m.dataPlain, err = s.ScanString()
		m.data = s.Since(start)
	} else {
		m.data, err = s.SkipValue()
	}
	if err != nil {
		return err
	}
	m.seen |= seenData
	return nil
}

func (d *Decoder) errorMember(dst *AckError) error {
	s := &d.s
	*dst = AckError{}
	switch s.Peek() {
	case 'n':
		return s.ScanLiteral("null")
	case '{':
	default:
		return d.wrongType("error", "object")
	}
	return d.eachMember(func(key []byte) error {
		switch string(key) {
		case "name":
			return d.stringMember("error.name", nil, &dst.Name, 0)
		case "message":
			return d.stringMember("error.message", nil, &dst.Message, 0)
		}
		_, err := s.SkipValue()
		return err
	})
}
