package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
)

var compressors = []byte{CompressorNoop, CompressorSnappy, CompressorZlib, CompressorZstd}

// compressedMsg builds an OP_COMPRESSED message by hand around data.
func compressedMsg(orig OpCode, size int32, id byte, data []byte) []byte {
	b := appendHeader(nil, Header{RequestID: 4, ResponseTo: 2, OpCode: OpCompressed})
	b = binary.LittleEndian.AppendUint32(b, uint32(orig))
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = append(b, id)
	b = append(b, data...)
	finishLength(b, 0)
	return b
}

func TestCompressRoundTrip(t *testing.T) {
	docs := make([][]byte, 50)
	for i := range docs {
		docs[i] = doc(t, "_id", i, "s", strings.Repeat("abc", i*10))
	}
	msgs := map[string][]byte{
		"op_msg":         opMsg(42, 0, kind0(doc(t, "insert", "c", "$db", "db")), kind1("documents", docs...)),
		"op_msg crc":     opMsg(43, ChecksumPresent, kind0(doc(t, "find", "c", "$db", "db"))),
		"reply":          AppendReply(nil, 1, 2, 0, 0, 0, docs[3]),
		"empty op_msg":   opMsg(44, 0),
		"header only":    appendHeader(nil, Header{Length: HeaderSize, RequestID: 5, OpCode: OpMsg}),
		"incompressible": append(appendHeader(nil, Header{Length: HeaderSize + 4096, OpCode: 9999}), randomBytes(4096)...),
	}
	for name, msg := range msgs {
		for _, id := range compressors {
			t.Run(name+"/"+CompressorName(id), func(t *testing.T) {
				out, err := Compress([]byte("prefix"), msg, id, zlib.DefaultCompression)
				if err != nil {
					t.Fatal(err)
				}
				if string(out[:6]) != "prefix" {
					t.Fatal("prefix overwritten")
				}
				h, body, err := ReadMessage(bytes.NewReader(out[6:]))
				if err != nil {
					t.Fatal(err)
				}
				orig, plain, gotID, err := Decompress(h, body)
				if err != nil {
					t.Fatal(err)
				}
				if gotID != id || orig != decodeHeader(msg) || !bytes.Equal(plain, msg[HeaderSize:]) {
					t.Fatalf("round trip: id %d header %+v", gotID, orig)
				}
				if orig.OpCode == OpMsg && len(plain) > 4 {
					if _, err := ParseMsg(orig, plain); err != nil {
						t.Fatalf("parse after decompression: %v", err)
					}
				}
			})
		}
	}
}

// TestInterop checks both directions against payloads compressed and
// decompressed directly with the libraries, zstd configured as the Go driver
// configures it.
func TestInterop(t *testing.T) {
	msg := opMsg(9, 0, kind0(doc(t, "insert", "c", "$db", "db", "pad", strings.Repeat("xyz", 2000))))
	payload := msg[HeaderSize:]
	zenc, err := zstd.NewWriter(nil, zstd.WithWindowSize(8<<20), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	zdec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id         byte
		compress   func([]byte) []byte
		decompress func([]byte) ([]byte, error)
	}{
		{CompressorSnappy, func(b []byte) []byte { return snappy.Encode(nil, b) }, func(b []byte) ([]byte, error) { return snappy.Decode(nil, b) }},
		{CompressorZlib, func(b []byte) []byte {
			var buf bytes.Buffer
			w, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		}, func(b []byte) ([]byte, error) {
			r, err := zlib.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			return io.ReadAll(r)
		}},
		{CompressorZstd, func(b []byte) []byte { return zenc.EncodeAll(b, nil) }, func(b []byte) ([]byte, error) { return zdec.DecodeAll(b, nil) }},
	}
	for _, tt := range tests {
		t.Run(CompressorName(tt.id), func(t *testing.T) {
			h, body := split(compressedMsg(OpMsg, int32(len(payload)), tt.id, tt.compress(payload)))
			_, plain, _, err := Decompress(h, body)
			if err != nil || !bytes.Equal(plain, payload) {
				t.Fatalf("decompressing the library's payload: %v", err)
			}
			ours, err := Compress(nil, msg, tt.id, 6)
			if err != nil {
				t.Fatal(err)
			}
			back, err := tt.decompress(ours[HeaderSize+CompressedPrefix:])
			if err != nil || !bytes.Equal(back, payload) {
				t.Fatalf("the library decompressing ours: %v", err)
			}
		})
	}
}

func TestDecompressErrors(t *testing.T) {
	payload := opMsg(1, 0, kind0(doc(t, "ping", 1, "pad", strings.Repeat("a", 300))))[HeaderSize:]
	size := int32(len(payload))
	snap := snappy.Encode(nil, payload)
	var zb bytes.Buffer
	zw := zlib.NewWriter(&zb)
	zw.Write(payload)
	zw.Close()
	zl := zb.Bytes()
	enc, _ := zstd.NewWriter(nil)
	zs := enc.EncodeAll(payload, nil)
	flip := func(b []byte, i int) []byte {
		b = bytes.Clone(b)
		b[i] ^= 0x5A
		return b
	}
	truncatedPrefix := compressedMsg(OpMsg, size, CompressorNoop, nil)[:HeaderSize+8]
	finishLength(truncatedPrefix, 0)
	tests := []struct {
		name string
		msg  []byte
	}{
		{"truncated prefix", truncatedPrefix},
		{"unknown compressor", compressedMsg(OpMsg, size, 4, payload)},
		{"nested OP_COMPRESSED", compressedMsg(OpCompressed, size, CompressorNoop, payload)},
		{"negative size", compressedMsg(OpMsg, -1, CompressorNoop, payload)},
		{"size over maximum", compressedMsg(OpMsg, MaxMessageSize-HeaderSize+1, CompressorZstd, zs)},
		{"noop size too large", compressedMsg(OpMsg, size+1, CompressorNoop, payload)},
		{"noop size too small", compressedMsg(OpMsg, size-1, CompressorNoop, payload)},
		{"snappy size too large", compressedMsg(OpMsg, size+1, CompressorSnappy, snap)},
		{"snappy size too small", compressedMsg(OpMsg, size-1, CompressorSnappy, snap)},
		{"snappy truncated", compressedMsg(OpMsg, size, CompressorSnappy, snap[:len(snap)-5])},
		{"snappy copy before literal", compressedMsg(OpMsg, size, CompressorSnappy, append(binary.AppendUvarint(nil, uint64(size)), 0x01, 0x05))},
		{"snappy bad length varint", compressedMsg(OpMsg, size, CompressorSnappy, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})},
		{"snappy empty", compressedMsg(OpMsg, size, CompressorSnappy, nil)},
		{"zlib size too large", compressedMsg(OpMsg, size+1, CompressorZlib, zl)},
		{"zlib size too small", compressedMsg(OpMsg, size-1, CompressorZlib, zl)},
		{"zlib truncated", compressedMsg(OpMsg, size, CompressorZlib, zl[:len(zl)-3])},
		{"zlib bad header", compressedMsg(OpMsg, size, CompressorZlib, flip(zl, 0))},
		{"zlib bad checksum", compressedMsg(OpMsg, size, CompressorZlib, flip(zl, len(zl)-1))},
		{"zlib corrupted", compressedMsg(OpMsg, size, CompressorZlib, flip(zl, len(zl)/2))},
		{"zlib trailing garbage", compressedMsg(OpMsg, size, CompressorZlib, append(bytes.Clone(zl), 1, 2, 3))},
		{"zstd size too large", compressedMsg(OpMsg, size+1, CompressorZstd, zs)},
		{"zstd size too small", compressedMsg(OpMsg, size-1, CompressorZstd, zs)},
		{"zstd truncated", compressedMsg(OpMsg, size, CompressorZstd, zs[:len(zs)-3])},
		{"zstd corrupted", compressedMsg(OpMsg, size, CompressorZstd, flip(zs, len(zs)/2))},
		{"zstd bad magic", compressedMsg(OpMsg, size, CompressorZstd, flip(zs, 0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body, err := ReadMessage(bytes.NewReader(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			_, _, _, err = Decompress(h, body)
			checkErr(t, err, "close")
		})
	}
	t.Run("not OP_COMPRESSED", func(t *testing.T) {
		_, _, _, err := Decompress(split(opMsg(1, 0, kind0(doc(t, "a", 1)))))
		checkErr(t, err, "close")
	})
}

func TestCompressErrors(t *testing.T) {
	msg := opMsg(1, 0, kind0(doc(t, "a", 1)))
	compressed, err := Compress(nil, msg, CompressorNoop, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		msg   []byte
		id    byte
		level int
	}{
		{"short message", msg[:10], CompressorSnappy, 0},
		{"length mismatch", msg[:len(msg)-1], CompressorSnappy, 0},
		{"already compressed", compressed, CompressorSnappy, 0},
		{"unknown compressor", msg, 7, 0},
		{"zlib level too high", msg, CompressorZlib, 10},
		{"zlib level too low", msg, CompressorZlib, -3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Compress([]byte("x"), tt.msg, tt.id, tt.level)
			if err == nil {
				t.Fatal("no error")
			}
			if string(out) != "x" {
				t.Fatalf("dst changed to %q", out)
			}
		})
	}
}

func TestCompressorNames(t *testing.T) {
	for _, name := range []string{"snappy", "zlib", "zstd"} {
		id, ok := CompressorID(name)
		if !ok || CompressorName(id) != name {
			t.Errorf("%s: id %d, %v", name, id, ok)
		}
	}
	for _, name := range []string{"noop", "", "ZLIB", "lz4"} {
		if _, ok := CompressorID(name); ok {
			t.Errorf("%q is not negotiable", name)
		}
	}
	if CompressorName(CompressorNoop) != "noop" || CompressorName(9) != "" {
		t.Error("CompressorName of noop or unknown id")
	}
}

func TestNegotiateCompressors(t *testing.T) {
	all := []string{"snappy", "zlib", "zstd"}
	tests := []struct {
		client, enabled, want []string
	}{
		{[]string{"zstd", "snappy"}, all, []string{"zstd", "snappy"}},
		{[]string{"zlib", "lz4", "zstd", "zlib"}, all, []string{"zlib", "zstd"}},
		{[]string{"zstd", "snappy"}, []string{"snappy"}, []string{"snappy"}},
		{[]string{"noop", "zlib"}, []string{"noop", "zlib"}, []string{"zlib"}},
		{[]string{"zstd"}, nil, nil},
		{nil, all, nil},
	}
	for _, tt := range tests {
		if got := NegotiateCompressors(tt.client, tt.enabled); !slices.Equal(got, tt.want) {
			t.Errorf("NegotiateCompressors(%q, %q) = %q, want %q", tt.client, tt.enabled, got, tt.want)
		}
	}
}

// randomBytes returns deterministic incompressible bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// TestDecompressBombsAllocateLittle sends compressed data of a few bytes
// announcing nearly MaxMessageSize: each is refused, and none allocates
// anywhere near the announced size.
func TestDecompressBombsAllocateLittle(t *testing.T) {
	const announced = MaxMessageSize - HeaderSize
	zeros := make([]byte, 4<<20)
	snappyHead := binary.AppendUvarint(nil, announced)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zs := enc.EncodeAll(zeros, nil)
	var zb bytes.Buffer
	zw := zlib.NewWriter(&zb)
	zw.Write(zeros)
	zw.Close()
	tests := []struct {
		name string
		id   byte
		data []byte
	}{
		{"snappy", CompressorSnappy, append(snappyHead, make([]byte, 16)...)},
		{"zstd", CompressorZstd, zs[:24]},
		{"zlib", CompressorZlib, zb.Bytes()[:24]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body := split(compressedMsg(OpMsg, announced, tt.id, tt.data))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, _, err := Decompress(h, body)
			runtime.ReadMemStats(&after)
			checkErr(t, err, "close")
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Fatalf("allocated %d bytes", n)
			}
		})
	}
}
