package tikvkv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
)

// Large values. TiKV refuses a write request above its raft entry limit
// (raft-entry-max-size, 8 MiB by default), so one key cannot hold a value
// of that size: a 16 MiB document, or its oplog entry. A value longer than
// chunkSize is stored as a header under its key and its bytes in chunks
// under keys of their own, written in the same transaction:
//
//	<key>                                         chunkedPrefix ver:8 seq:4 n:4 len:4
//	0xfe <len(key):4> <key> <ver:8> <seq:4> <i:4>  the i-th chunk of the value
//
// (ver, seq) names one write of the value: the writing transaction's start
// timestamp and its count of large values. An overwrite or a deletion of
// the key does not read the old header, so the old chunks stay until
// SweepGarbage deletes the chunks no header names, the way a dropped
// collection's data waits for the removal of garbage.
const chunkedPrefix = 1

// chunkSize is the largest value stored under its own key, and the size of
// a chunk (a variable for tests).
var chunkSize = 4 << 20

// chunkSpace starts every chunk key; Folio's own keys start with an ASCII
// space tag, below it, and iterators stop before it.
const chunkSpace = 0xfe

// chunkHeader is the header of a chunked value.
type chunkHeader struct {
	ver      uint64
	seq, n   uint32
	valueLen uint32
}

func (h chunkHeader) encode() []byte {
	b := []byte{chunkedPrefix}
	b = binary.BigEndian.AppendUint64(b, h.ver)
	b = binary.BigEndian.AppendUint32(b, h.seq)
	b = binary.BigEndian.AppendUint32(b, h.n)
	return binary.BigEndian.AppendUint32(b, h.valueLen)
}

func decodeHeader(v []byte) (chunkHeader, bool) {
	if len(v) != 21 || v[0] != chunkedPrefix {
		return chunkHeader{}, false
	}
	return chunkHeader{
		ver: binary.BigEndian.Uint64(v[1:]), seq: binary.BigEndian.Uint32(v[9:]),
		n: binary.BigEndian.Uint32(v[13:]), valueLen: binary.BigEndian.Uint32(v[17:]),
	}, true
}

// chunkGroup is the prefix of the chunk keys of one write of key's value.
func chunkGroup(key []byte, ver uint64, seq uint32) []byte {
	k := binary.BigEndian.AppendUint32([]byte{chunkSpace}, uint32(len(key)))
	k = append(k, key...)
	k = binary.BigEndian.AppendUint64(k, ver)
	return binary.BigEndian.AppendUint32(k, seq)
}

func (h chunkHeader) keys(key []byte) [][]byte {
	group := chunkGroup(key, h.ver, h.seq)
	keys := make([][]byte, h.n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint32(bytes.Clone(group), uint32(i))
	}
	return keys
}

// splitValue returns the header and the chunks of a value longer than
// chunkSize, written by the transaction that started at ver as its seq-th
// large value.
func splitValue(value []byte, ver uint64, seq uint32) (chunkHeader, [][]byte) {
	var chunks [][]byte
	for rest := value; len(rest) > 0; {
		n := min(len(rest), chunkSize)
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	return chunkHeader{ver: ver, seq: seq, n: uint32(len(chunks)), valueLen: uint32(len(value))}, chunks
}

// batchGetter reads keys at one snapshot (client-go's BatchGet of a
// snapshot or a transaction).
type batchGetter func(ctx context.Context, keys [][]byte) (map[string][]byte, error)

// assemble reads the chunks a header names and joins them.
func (s *Store) assemble(get batchGetter, key []byte, h chunkHeader) ([]byte, error) {
	keys := h.keys(key)
	ctx, cancel := s.ctx()
	defer cancel()
	m, err := get(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, h.valueLen)
	for _, k := range keys {
		c, ok := m[string(k)]
		if !ok {
			return nil, fmt.Errorf("tikv: chunk %x of a large value missing", k)
		}
		out = append(out, c...)
	}
	if len(out) != int(h.valueLen) {
		return nil, fmt.Errorf("tikv: large value of %d bytes, %d expected", len(out), h.valueLen)
	}
	return out, nil
}

// decodeStored is a stored value as Folio wrote it: stripped of its
// prefix, or assembled from its chunks.
func (s *Store) decodeStored(get batchGetter, key, v []byte) ([]byte, bool, error) {
	if h, ok := decodeHeader(v); ok {
		out, err := s.assemble(get, key, h)
		return out, err == nil, err
	}
	return decodeValue(v)
}

// SweepGarbage implements storage.Sweeper: it deletes the chunks of large
// values that no header names any more (overwritten, deleted, or removed
// with a dropped collection's range), as of a fresh snapshot. Headers and
// chunks commit together and a (ver, seq) is never reused, so chunks
// unnamed at one snapshot stay unnamed.
func (s *Store) SweepGarbage() error {
	snap, err := s.freshSnapshot()
	if err != nil {
		return err
	}
	it, err := snap.Iter([]byte{chunkSpace}, []byte{chunkSpace + 1})
	if err != nil {
		return err
	}
	defer it.Close()
	var stale [][]byte
	var group []byte
	named := false
	for ; it.Valid(); err = it.Next() {
		if err != nil {
			return err
		}
		k := it.Key()
		if len(k) < 5 || len(k) < 5+int(binary.BigEndian.Uint32(k[1:]))+16 {
			return fmt.Errorf("tikv: malformed chunk key %x", k)
		}
		klen := int(binary.BigEndian.Uint32(k[1:]))
		g := k[:len(k)-4]
		if !bytes.Equal(g, group) {
			group = bytes.Clone(g)
			key := k[5 : 5+klen]
			h, ok, err := s.header(snap.Get, key)
			if err != nil {
				return err
			}
			named = ok && h.ver == binary.BigEndian.Uint64(k[5+klen:]) && h.seq == binary.BigEndian.Uint32(k[13+klen:])
		}
		if !named {
			stale = append(stale, bytes.Clone(k))
		}
	}
	if err != nil || len(stale) == 0 {
		return err
	}
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, k := range stale {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// header reads key's header, if its value is chunked.
func (s *Store) header(get func(context.Context, []byte) ([]byte, error), key []byte) (chunkHeader, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	v, err := get(ctx, key)
	if isNotFound(err) {
		return chunkHeader{}, false, nil
	}
	if err != nil {
		return chunkHeader{}, false, err
	}
	h, ok := decodeHeader(v)
	return h, ok, nil
}
