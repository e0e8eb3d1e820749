package mongoerr

// Location codes: codes MongoDB 7.0 raises without a name in
// error_codes.yml, so their codeName is "Location<code>".
const (
	// IDLDuplicateField: a command field given twice (named only after 7.0).
	IDLDuplicateField Code = 40413
	// IDLFailedToParse: a required command field is missing (named only after 7.0).
	IDLFailedToParse Code = 40414
	// IDLUnknownField: a command field the command does not take (named only after 7.0).
	IDLUnknownField Code = 40415
)
