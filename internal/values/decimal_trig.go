package values

import (
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// MongoDB's decimal π (Decimal128::kPi: π's first 51 digits, rounded half
// to even to 34) and the factors $degreesToRadians and $radiansToDegrees
// multiply a decimal by, kPi/180 and 180/kPi, each rounded to 34 digits.
var (
	decimalPi = DecimalValue(roundDecimal(bigFromString("314159265358979323846264338327950288419716939937510"), -50))

	decimalPiOver180 = DecimalQuo(decimalPi, DecimalValue(roundDecimal(big.NewInt(180), 0)))
	decimal180OverPi = DecimalQuo(DecimalValue(roundDecimal(big.NewInt(180), 0)), decimalPi)
)

func bigFromString(s string) *big.Int {
	n, _ := new(big.Int).SetString(s, 10)
	return n
}

// DecimalDegreesToRadians is a×(kPi/180), one decimal product.
func DecimalDegreesToRadians(a bson.RawValue) bson.RawValue {
	return DecimalValue(decimalArith(toDecimal(a), toDecimal(decimalPiOver180), true))
}

// DecimalRadiansToDegrees is a×(180/kPi), one decimal product.
func DecimalRadiansToDegrees(a bson.RawValue) bson.RawValue {
	return DecimalValue(decimalArith(toDecimal(a), toDecimal(decimal180OverPi), true))
}
