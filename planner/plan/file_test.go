package plan

import (
	"bytes"
	"testing"
)

// TestSnapshotFileBytes: a snapshot file holds any bytes exactly through
// the plan file (text as text, the rest as base64), and Bytes refuses
// content that does not match its hash.
func TestSnapshotFileBytes(t *testing.T) {
	text := []byte("name,bmc\nr01,https://127.0.0.1\n")
	bin := []byte{0xff, 0x00, 0xc3, 0x28, '\n'}
	p := samplePlan()
	p.Config.DataFiles = []File{NewFile("bin.dat", bin), NewFile("inventory.csv", text)}
	if p.Config.DataFiles[0].Encoding != EncodingBase64 || p.Config.DataFiles[1].Encoding != "" {
		t.Fatalf("encodings %q %q", p.Config.DataFiles[0].Encoding, p.Config.DataFiles[1].Encoding)
	}
	file, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]byte{bin, text} {
		b, err := got.Config.DataFiles[i].Bytes()
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: %q, %v; want %q", got.Config.DataFiles[i].Name, b, err, want)
		}
	}
	f := NewFile("inventory.csv", text)
	f.Content += "x"
	if _, err := f.Bytes(); err == nil {
		t.Error("Bytes accepted content that does not match its sha256")
	}
	f = NewFile("x", text)
	f.Encoding = "rot13"
	if _, err := f.Bytes(); err == nil {
		t.Error("Bytes accepted an unknown encoding")
	}
}
