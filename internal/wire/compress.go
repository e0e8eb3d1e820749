package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
)

// Compressor ids of OP_COMPRESSED. Noop is never negotiated but is valid on
// the wire.
const (
	CompressorNoop   byte = 0
	CompressorSnappy byte = 1
	CompressorZlib   byte = 2
	CompressorZstd   byte = 3
)

// CompressedPrefix is the OP_COMPRESSED body before the compressed bytes:
// int32 originalOpcode, int32 uncompressedSize, uint8 compressorId. A
// compressor's input is the original body, its output what follows.
const CompressedPrefix = 9

var compressorNames = [...]string{CompressorNoop: "noop", CompressorSnappy: "snappy", CompressorZlib: "zlib", CompressorZstd: "zstd"}

// CompressorID returns the id of a compressor named in hello's compression
// list: "snappy", "zlib" or "zstd".
func CompressorID(name string) (byte, bool) {
	for id, n := range compressorNames {
		if n == name && byte(id) != CompressorNoop {
			return byte(id), true
		}
	}
	return 0, false
}

// CompressorName returns the name of compressor id, or "" if it is unknown.
func CompressorName(id byte) string {
	if int(id) < len(compressorNames) {
		return compressorNames[id]
	}
	return ""
}

// NegotiateCompressors returns the compressors to announce in the hello
// reply: the names in the client's list that are also in enabled and known to
// this package, in the client's order, without duplicates.
func NegotiateCompressors(client, enabled []string) []string {
	var out []string
	for _, name := range client {
		if _, ok := CompressorID(name); !ok || !contains(enabled, name) || contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Compress appends to dst the OP_COMPRESSED form of msg, a complete message:
// a header with msg's requestID and responseTo, msg's opcode, the length of
// msg's body, the compressor id and msg's body compressed with it. zlibLevel
// is used by zlib only and must be a compress/zlib level. A message that is
// already compressed, or a result over MaxMessageSize, is an error.
func Compress(dst []byte, msg []byte, compressorID byte, zlibLevel int) ([]byte, error) {
	if len(msg) < HeaderSize {
		return dst, fmt.Errorf("wire: cannot compress a %d-byte message", len(msg))
	}
	h := decodeHeader(msg)
	if int(h.Length) != len(msg) || h.OpCode == OpCompressed {
		return dst, fmt.Errorf("wire: cannot compress %v of length %d in %d bytes", h.OpCode, h.Length, len(msg))
	}
	payload := msg[HeaderSize:]
	start := len(dst)
	dst = appendHeader(dst, Header{RequestID: h.RequestID, ResponseTo: h.ResponseTo, OpCode: OpCompressed})
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.OpCode))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = append(dst, compressorID)
	var err error
	switch compressorID {
	case CompressorNoop:
		dst = append(dst, payload...)
	case CompressorSnappy:
		n := len(dst)
		dst = growLen(dst, snappy.MaxEncodedLen(len(payload)))
		dst = dst[:n+len(snappy.Encode(dst[n:], payload))]
	case CompressorZlib:
		dst, err = zlibCompress(dst, payload, zlibLevel)
	case CompressorZstd:
		var enc *zstd.Encoder
		if enc, err = zstdEncoder(); err == nil {
			dst = enc.EncodeAll(payload, dst)
		}
	default:
		err = fmt.Errorf("wire: unknown compressor id %d", compressorID)
	}
	if err != nil {
		return dst[:start], err
	}
	if len(dst)-start > MaxMessageSize {
		return dst[:start], fmt.Errorf("wire: compressed message of %d bytes exceeds %d", len(dst)-start, MaxMessageSize)
	}
	finishLength(dst, start)
	return dst, nil
}

// Decompress unwraps the OP_COMPRESSED message with header h and body body.
// It returns the original message's header (its opcode, and its length as
// uncompressed, requestID and responseTo unchanged), the original body and
// the compressor id, which the server uses to compress its reply. The
// uncompressed message may not exceed MaxMessageSize, must decompress to
// exactly the announced size, and may not itself be OP_COMPRESSED. A
// noop-compressed body aliases body. All errors close the connection.
func Decompress(h Header, body []byte) (Header, []byte, byte, error) {
	if h.OpCode != OpCompressed {
		return Header{}, nil, 0, fmt.Errorf("%w: %v is not OP_COMPRESSED", ErrProtocol, h.OpCode)
	}
	if len(body) < CompressedPrefix {
		return Header{}, nil, 0, fmt.Errorf("%w: OP_COMPRESSED of %d bytes is truncated", ErrProtocol, len(body))
	}
	orig := Header{
		RequestID:  h.RequestID,
		ResponseTo: h.ResponseTo,
		OpCode:     OpCode(binary.LittleEndian.Uint32(body)),
	}
	size := int(int32(binary.LittleEndian.Uint32(body[4:])))
	id, data := body[8], body[CompressedPrefix:]
	if orig.OpCode == OpCompressed {
		return Header{}, nil, 0, fmt.Errorf("%w: OP_COMPRESSED wraps OP_COMPRESSED", ErrProtocol)
	}
	if size < 0 || size > MaxMessageSize-HeaderSize {
		return Header{}, nil, 0, fmt.Errorf("%w: uncompressed size %d outside [0, %d]", ErrProtocol, size, MaxMessageSize-HeaderSize)
	}
	orig.Length = int32(HeaderSize + size)
	var out []byte
	var err error
	switch id {
	case CompressorNoop:
		out = data
	case CompressorSnappy:
		out, err = snappyDecompress(data, size)
	case CompressorZlib:
		out, err = zlibDecompress(data, size)
	case CompressorZstd:
		out, err = zstdDecompress(data, size)
	default:
		return Header{}, nil, 0, fmt.Errorf("%w: unknown compressor id %d", ErrProtocol, id)
	}
	if err != nil {
		return Header{}, nil, 0, fmt.Errorf("%w: %s decompression: %v", ErrProtocol, CompressorName(id), err)
	}
	if len(out) != size {
		return Header{}, nil, 0, fmt.Errorf("%w: %s data decompressed to %d bytes, announced %d", ErrProtocol, CompressorName(id), len(out), size)
	}
	return orig, out, id, nil
}

// atEOF checks that a decompressing reader that produced size bytes has
// nothing more.
func atEOF(r io.Reader, size int) error {
	var probe [1]byte
	if n, err := r.Read(probe[:]); n != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("stream is longer than announced %d bytes", size)
		}
		return err
	}
	return nil
}

// PeekCompressor returns the compressor id of an OP_COMPRESSED body, so that
// a server can refuse a compressor it did not negotiate before decompressing.
func PeekCompressor(body []byte) (byte, bool) {
	if len(body) < CompressedPrefix {
		return 0, false
	}
	return body[CompressedPrefix-1], true
}

// growLen extends dst by n bytes of unspecified content.
func growLen(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nb := make([]byte, len(dst), len(dst)+n)
		copy(nb, dst)
		dst = nb
	}
	return dst[:len(dst)+n]
}

// snappyMaxExpansion bounds how many bytes one byte of a snappy block can
// decode to: the densest element, a 3-byte copy, yields 64 bytes.
const snappyMaxExpansion = 22

// snappyDecompress decodes a snappy block, refusing before allocating one
// whose own length prefix disagrees with size or that is too short to decode
// to size bytes.
func snappyDecompress(data []byte, size int) ([]byte, error) {
	n, err := snappy.DecodedLen(data)
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, fmt.Errorf("block announces %d bytes", n)
	}
	if size > snappyMaxExpansion*len(data) {
		return nil, fmt.Errorf("%d bytes cannot decode to %d", len(data), size)
	}
	return snappy.Decode(make([]byte, size), data)
}

// appendWriter is an io.Writer appending to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// zlibWriters pools zlib writers by level (index level-zlib.HuffmanOnly);
// each holds a large deflate state.
var zlibWriters [zlib.BestCompression - zlib.HuffmanOnly + 1]sync.Pool

func zlibCompress(dst, payload []byte, level int) ([]byte, error) {
	if level < zlib.HuffmanOnly || level > zlib.BestCompression {
		return dst, fmt.Errorf("wire: invalid zlib level %d", level)
	}
	aw := &appendWriter{b: dst}
	pool := &zlibWriters[level-zlib.HuffmanOnly]
	w, _ := pool.Get().(*zlib.Writer)
	if w == nil {
		var err error
		if w, err = zlib.NewWriterLevel(aw, level); err != nil {
			return dst, err
		}
	} else {
		w.Reset(aw)
	}
	_, err := w.Write(payload)
	if err == nil {
		err = w.Close()
	}
	w.Reset(nil)
	pool.Put(w)
	return aw.b, err
}

// zlibReaders pools zlib readers; each holds an inflate window.
var zlibReaders sync.Pool

// zlibDecompress inflates one zlib stream of exactly size bytes, checking its
// Adler-32 and that nothing follows it.
func zlibDecompress(data []byte, size int) ([]byte, error) {
	br := bytes.NewReader(data)
	var r io.ReadCloser
	if pooled, ok := zlibReaders.Get().(io.ReadCloser); ok {
		if err := pooled.(zlib.Resetter).Reset(br, nil); err != nil {
			zlibReaders.Put(pooled)
			return nil, err
		}
		r = pooled
	} else {
		var err error
		if r, err = zlib.NewReader(br); err != nil {
			return nil, err
		}
	}
	defer zlibReaders.Put(r)
	out, err := readBody(r, size, nil)
	if err != nil {
		return nil, err
	}
	if err := atEOF(r, size); err != nil {
		return nil, err
	}
	if br.Len() != 0 {
		return nil, fmt.Errorf("%d bytes follow the zlib stream", br.Len())
	}
	return out, nil
}

var (
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil)
	})
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil,
			zstd.WithDecoderMaxMemory(MaxMessageSize),
			zstd.WithDecoderMaxWindow(MaxMessageSize),
			zstd.WithDecodeAllCapLimit(true))
	})
)

// zstdMaxExpansion bounds how many bytes one byte of zstd frames can decode
// to: a block yields at most 128KiB and takes at least 4 bytes (a 3-byte
// header and an RLE byte).
const zstdMaxExpansion = 128 << 10 / 4

// zstdDecompress decodes zstd frames into a buffer of exactly size bytes;
// the decoder stops at its capacity rather than grow it. Data too short to
// decode to size bytes is refused before the buffer is allocated.
func zstdDecompress(data []byte, size int) ([]byte, error) {
	if size > zstdMaxExpansion*len(data) {
		return nil, fmt.Errorf("%d bytes cannot decode to %d", len(data), size)
	}
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	return dec.DecodeAll(data, make([]byte, 0, size))
}
