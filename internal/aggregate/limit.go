package aggregate

import (
	"math/rand/v2"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// skipStage is $skip: it drops the first n documents.
type skipStage struct{ n int64 }

// parseSkip reads {$skip: n}: a number holding a non-negative 64-bit
// whole number (5107200).
func parseSkip(arg bson.RawValue) (stage, error) {
	n, err := stageCount("$skip", arg, mongoerr.SkipInvalid)
	if err != nil {
		return nil, err
	}
	return &skipStage{n}, nil
}

// stageCount reads the argument of $skip or $limit (stage) as MongoDB
// reads such counts: a number holding a whole value that fits in 64 bits
// and is not negative, or invalid with the reason.
func stageCount(stage string, arg bson.RawValue, invalid mongoerr.Code) (int64, error) {
	n, reason := values.IntegerReason(arg)
	if reason == "" && n < 0 {
		reason = "Expected a non-negative number in"
	}
	if reason != "" {
		return 0, mongoerr.New(invalid, "invalid argument to %s stage: %s: %s: %s", stage, reason, stage, values.Shell(arg))
	}
	return n, nil
}

// explainSpec is $skip's count as MongoDB's DocumentSourceSkip serializes
// it: a long, whatever number type was written.
func (s *skipStage) explainSpec() any { return s.n }

func (s *skipStage) run(in Source, _ *runtime) Source {
	left := s.n
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		if left > 0 {
			left--
			return nil, nil
		}
		return []bson.Raw{doc}, nil
	}}
}

// limitStage is $limit: it passes the first n documents.
type limitStage struct{ n int64 }

// parseLimit reads {$limit: n}: a number holding a non-negative 64-bit
// whole number (5107201) that is not zero (15958).
func parseLimit(arg bson.RawValue) (stage, error) {
	n, err := stageCount("$limit", arg, mongoerr.LimitInvalid)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, mongoerr.New(mongoerr.LimitNotPositive, "the limit must be positive")
	}
	return &limitStage{n}, nil
}

// explainSpec is $limit's count as MongoDB's DocumentSourceLimit
// serializes it: a long, whatever number type was written.
func (l *limitStage) explainSpec() any { return l.n }

func (l *limitStage) run(in Source, _ *runtime) Source { return &limitSource{in: in, left: l.n} }

type limitSource struct {
	in   Source
	left int64
}

func (l *limitSource) Next() (bson.Raw, error) {
	if l.left <= 0 {
		return nil, nil
	}
	l.left--
	return l.in.Next()
}

func (l *limitSource) Close() error { return l.in.Close() }

// Meta is the metadata of the document returned last.
func (l *limitSource) Meta() docsrc.Meta { return docsrc.MetaOf(l.in) }

// sampleStage is $sample: size documents chosen uniformly at random (all of
// them, shuffled, when there are fewer).
type sampleStage struct{ size int64 }

// parseSample reads {$sample: {size: n}}.
func parseSample(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.SampleSpecNotObject, "the $sample stage specification must be an object")
	}
	s := &sampleStage{size: -1}
	for _, f := range fieldsOf(arg.Value) {
		if f.key != "size" {
			return nil, mongoerr.New(mongoerr.SampleUnknownOption, "unrecognized option to $sample: %s", f.key)
		}
		if !values.IsNumber(f.val.Type) {
			return nil, mongoerr.New(mongoerr.SampleSizeNotNumber, "size argument to $sample must be a number")
		}
		// MongoDB reads the size with safeNumberLong: 1.5 is 1, a decimal
		// rounds half to even, NaN is 0.
		n := expr.SafeLong(f.val)
		if n < 0 {
			return nil, mongoerr.New(mongoerr.SampleSizeNegative, "size argument to $sample must not be negative")
		}
		s.size = n
	}
	if s.size < 0 {
		return nil, mongoerr.New(mongoerr.SampleMissingSize, "$sample stage must specify a size")
	}
	return s, nil
}

// explainSpec is $sample as MongoDB's DocumentSourceSample serializes it:
// {size: <long>}, the size as read.
func (s *sampleStage) explainSpec() any { return bson.D{{Key: "size", Value: s.size}} }

func (s *sampleStage) run(in Source, rt *runtime) Source {
	l := &lazySource{in: in}
	l.compute = func() ([]bson.Raw, error) {
		// Reservoir sampling keeps memory to size documents, accounted
		// while they are chosen. The documents keep their metadata, as
		// MongoDB's $sample passes them whole through its sorter: metas
		// holds it beside res once a document carries some.
		acct := rt.holdAccount()
		defer acct.Release()
		var res []bson.Raw
		var metas []docsrc.Meta
		var seen int64
		for {
			doc, err := in.Next()
			if err != nil {
				return nil, err
			}
			if doc == nil {
				break
			}
			seen++
			meta := docsrc.MetaOf(in)
			if metas == nil && hasMeta(meta) {
				metas = make([]docsrc.Meta, len(res), cap(res))
			}
			size := heldDocSize(doc)
			if metas != nil {
				size += heldMetaSize(meta)
			}
			j := int64(len(res))
			if j >= s.size {
				if j = rand.Int64N(seen); j >= s.size {
					continue
				}
				acct.Shrink(heldDocSize(res[j]))
				if metas != nil {
					acct.Shrink(heldMetaSize(metas[j]))
				}
			}
			if !acct.Grow(size) {
				return nil, rt.refused("$sample")
			}
			if j == int64(len(res)) {
				res = append(res, doc)
				if metas != nil {
					metas = append(metas, meta)
				}
			} else {
				res[j] = doc
				if metas != nil {
					metas[j] = meta
				}
			}
		}
		rand.Shuffle(len(res), func(i, j int) {
			res[i], res[j] = res[j], res[i]
			if metas != nil {
				metas[i], metas[j] = metas[j], metas[i]
			}
		})
		l.out.Metas = metas
		return res, nil
	}
	return l
}

// inhibitStage is $_internalInhibitOptimization: it passes its input on,
// and, standing between stages, keeps the collection read from taking the
// ones after it (TakePushdown takes only leading ones).
type inhibitStage struct{}

func parseInhibitOptimization(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$_internalInhibitOptimization must take a nested object but found: $_internalInhibitOptimization: %s", values.Shell(arg))
	}
	if len(arg.Document()) > 5 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$_internalInhibitOptimization must take an empty object but found: %s", values.Shell(arg))
	}
	return inhibitStage{}, nil
}

func (inhibitStage) run(in Source, _ *runtime) Source { return in }
