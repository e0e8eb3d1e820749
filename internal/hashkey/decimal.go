package hashkey

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// parseDecimal is a decimal as the nearest double.
func parseDecimal(d bson.Decimal128) (float64, error) {
	return strconv.ParseFloat(d.String(), 64)
}
