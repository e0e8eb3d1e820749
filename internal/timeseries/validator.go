package timeseries

import "go.mongodb.org/mongo-driver/v2/bson"

// Validator is the validator MongoDB gives the collection of a time series
// collection's buckets, whose time field is timeField: a structural
// $jsonSchema of a bucket document (an ObjectId _id; control with a
// number version, min and max holding the time as a date, optionally
// closed and a count of at least 1, and nothing else; data a document;
// meta anything; nothing else). It guards against writes that would
// corrupt the buckets, not every rule a bucket follows.
func Validator(timeField string) bson.Raw {
	typ := func(t string) bson.D { return bson.D{{Key: "bsonType", Value: t}} }
	// object: a document with the required fields and these properties;
	// closed, with no other field
	object := func(required bson.A, props bson.D, closed bool) bson.D {
		d := bson.D{{Key: "bsonType", Value: "object"}, {Key: "required", Value: required}, {Key: "properties", Value: props}}
		if closed {
			d = append(d, bson.E{Key: "additionalProperties", Value: false})
		}
		return d
	}
	bound := object(bson.A{timeField}, bson.D{{Key: timeField, Value: typ("date")}}, false)
	control := object(bson.A{"version", "min", "max"}, bson.D{
		{Key: "version", Value: typ("number")},
		{Key: "min", Value: bound},
		{Key: "max", Value: bound},
		{Key: "closed", Value: typ("bool")},
		{Key: "count", Value: bson.D{{Key: "bsonType", Value: "number"}, {Key: "minimum", Value: int32(1)}}},
	}, true)
	schema := object(bson.A{"_id", "control", "data"}, bson.D{
		{Key: "_id", Value: typ("objectId")},
		{Key: "control", Value: control},
		{Key: "data", Value: typ("object")},
		{Key: "meta", Value: bson.D{}},
	}, true)
	raw, err := bson.Marshal(bson.D{{Key: "$jsonSchema", Value: schema}})
	if err != nil {
		panic(err) // only strings, documents and arrays of them
	}
	return raw
}
