package ws

import (
	"encoding/binary"
	"testing"
)

// The close codes a close frame may carry (RFC 6455 section 7.4): those
// of the RFC and the IANA registry that may be sent, and 3000-4999; not
// 1004 (reserved), 1005, 1006 and 1015 (never sent), the rest of
// 0-2999, or 5000 and above.
func TestCloseCodes(t *testing.T) {
	cases := []struct {
		code  int
		valid bool
	}{
		{0, false}, {999, false},
		{1000, true}, {1001, true}, {1002, true}, {1003, true},
		{1004, false}, {1005, false}, {1006, false},
		{1007, true}, {1008, true}, {1009, true}, {1010, true}, {1011, true},
		{1012, true}, {1013, true}, {1014, true},
		{1015, false}, {1016, false}, {1100, false}, {2000, false}, {2999, false},
		{3000, true}, {3999, true}, {4000, true}, {4999, true},
		{5000, false}, {65535, false},
	}
	for _, tc := range cases {
		if got := validCloseCode(tc.code); got != tc.valid {
			t.Errorf("validCloseCode(%d) = %v; want %v", tc.code, got, tc.valid)
		}
		p := binary.BigEndian.AppendUint16(nil, uint16(tc.code))
		ce, cerr := parseClose(append(p, "why"...))
		switch {
		case tc.valid && (cerr != nil || ce.Code != tc.code || ce.Reason != "why"):
			t.Errorf("parseClose(%d, why) = %v, %v; want code %d, reason why", tc.code, ce, cerr, tc.code)
		case !tc.valid && (ce != nil || cerr == nil || cerr.Code != CloseProtocolError):
			t.Errorf("parseClose(%d, why) = %v, %v; want a protocol error", tc.code, ce, cerr)
		}
	}
}

// A close frame's payload: empty (no code), a code and a UTF-8 reason;
// not one byte, nor a reason that is not UTF-8, whole or cut.
func TestParseClose(t *testing.T) {
	cases := []struct {
		name    string
		payload []byte
		code    int // the close's, or the error's
		err     bool
	}{
		{"empty", nil, CloseNoStatus, false},
		{"code only", []byte{0x03, 0xe8}, CloseNormal, false},
		{"code and reason", []byte{0x0f, 0xa0, 'o', 'k'}, 4000, false},
		{"one byte", []byte{0x03}, CloseProtocolError, true},
		{"reason not UTF-8", []byte{0x03, 0xe8, 0xff}, CloseInvalidPayload, true},
		{"reason cut inside a character", []byte{0x03, 0xe8, 'a', 0xe2, 0x82}, CloseInvalidPayload, true},
		{"reason with a surrogate", []byte{0x03, 0xe8, 0xed, 0xa0, 0x80}, CloseInvalidPayload, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ce, cerr := parseClose(tc.payload)
			got := ce
			if tc.err {
				got = cerr
			}
			if got == nil || got.Code != tc.code || (ce == nil) != tc.err {
				t.Fatalf("parseClose(%x) = %v, %v; want code %d, error %v", tc.payload, ce, cerr, tc.code, tc.err)
			}
		})
	}
}
