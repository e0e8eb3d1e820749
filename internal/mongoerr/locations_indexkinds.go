package mongoerr

// Hashed, wildcard and text indexes.
const (
	// HashedArrayValue: a document holding an array on a hashed index's path.
	HashedArrayValue Code = 16766
	// HashedUnique: a unique hashed index.
	HashedUnique Code = 16764
	// HashedFieldsMax: a key pattern with more than one hashed field.
	HashedFieldsMax Code = 31303
)
