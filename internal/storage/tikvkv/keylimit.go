package tikvkv

// maxKeySize is the longest key a Store writes: TiKV refuses a key over
// its storage.max-key-size (8 KiB by default), and a key's value may be
// stored in chunks under keys 21 bytes longer (chunkGroup).
const maxKeySize = 8<<10 - 21

// MaxKeySize implements storage.KeyLimit.
func (s *Store) MaxKeySize() int { return maxKeySize }
