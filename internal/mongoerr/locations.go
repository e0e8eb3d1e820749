package mongoerr

// Location codes: MongoDB raises these at one place in its source and gives
// them no name in error_codes.yml, so their codeName is "Location<code>".
const (
	// IDLValueOutOfRange is the error of a command field whose value fails
	// its IDL validator ("BSON field 'collStats.scale' value must be >= 1").
	IDLValueOutOfRange Code = 51024
)
