package mongoerr

// IDLValueOutOfRange is the location code (unnamed in error_codes.yml, so
// its codeName is "Location51024") of a command field whose value fails
// its IDL validator ("BSON field 'scale' value must be >= 1").
const IDLValueOutOfRange Code = 51024
