// Command cart shows add-to-cart with targeted updates: an upsert that
// pushes a line item unless the cart already has it ($ne guard), then a
// positional $inc of the line's quantity and the subtotal. It also shows
// what MongoDB does with the seed's sequence on the second click — the
// guarded upsert matches no cart and inserts a second one — and a fix with
// a partial unique index; and the seed's increase_qty loop (positional $inc,
// falling back to a $ne-guarded $push).
package main

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("cart", run) }

// pricing is a product's prices in cents.
type pricing struct {
	Retail int `bson:"retail"`
	Sale   int `bson:"sale"`
}

// cartItem is the copy of a product that a line item holds.
type cartItem struct {
	ID      bson.ObjectID `bson:"_id"`
	Slug    string        `bson:"slug"`
	SKU     string        `bson:"sku"`
	Name    string        `bson:"name"`
	Pricing pricing       `bson:"pricing"`
}

// order is a cart: an order in state CART.
type order struct {
	LineItems []struct {
		ID  bson.ObjectID `bson:"_id"`
		Qty int           `bson:"qty"`
	} `bson:"line_items"`
	SubTotal int `bson:"sub_total"`
}

var barrow = cartItem{ID: bson.NewObjectID(), Slug: "wheel-barrow-9092", SKU: "9092",
	Name: "Extra Large Wheel Barrow", Pricing: pricing{Retail: 589700, Sale: 489700}}

// addToCart runs the seed's two updates for one click and returns the
// result of the guarded upsert.
func addToCart(ctx context.Context, orders *mongo.Collection, user bson.ObjectID, item cartItem) (*mongo.UpdateResult, error) {
	res, err := orders.UpdateOne(ctx,
		bson.M{"user_id": user, "state": "CART", "line_items._id": bson.M{"$ne": item.ID}},
		bson.M{"$push": bson.M{"line_items": item}},
		options.UpdateOne().SetUpsert(true))
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return res, err
	}
	_, incErr := orders.UpdateOne(ctx,
		bson.M{"user_id": user, "state": "CART", "line_items._id": item.ID},
		bson.M{"$inc": bson.M{"line_items.$.qty": 1, "sub_total": item.Pricing.Sale}})
	if incErr != nil {
		return res, incErr
	}
	return res, err
}

// carts returns the user's carts.
func carts(ctx context.Context, k *cookbook.Kitchen, orders *mongo.Collection, user bson.ObjectID) []order {
	var out []order
	cur, err := orders.Find(ctx, bson.M{"user_id": user, "state": "CART"})
	if k.OK(err, "find carts") {
		k.OK(cur.All(ctx, &out), "read carts")
	}
	return out
}

func run(ctx context.Context, k *cookbook.Kitchen) {
	seedSequence(ctx, k)
	withUniqueCart(ctx, k)
	increaseQty(ctx, k)
}

// seedSequence runs the seed's updates as written, without a unique index.
func seedSequence(ctx context.Context, k *cookbook.Kitchen) {
	orders := k.DB.Collection("orders_naive")
	user := bson.NewObjectID()
	k.Step("first click: no cart yet, the guarded upsert creates it; the positional $inc sets qty 1")
	res, err := addToCart(ctx, orders, user, barrow)
	if k.OK(err, "add to cart") {
		k.Check(res.UpsertedCount == 1, "the upsert inserted the cart (upserted %d)", res.UpsertedCount)
	}
	got := carts(ctx, k, orders, user)
	k.Check(len(got) == 1 && len(got[0].LineItems) == 1 && got[0].LineItems[0].Qty == 1 && got[0].SubTotal == 489700,
		"one cart, one line, qty 1, subtotal 489700 (got %+v)", got)

	k.Step("second click, as MongoDB runs it: the $ne guard fails on the existing cart, so the upsert inserts a second cart")
	res, err = addToCart(ctx, orders, user, barrow)
	if k.OK(err, "add to cart again") {
		k.Check(res.MatchedCount == 0 && res.UpsertedCount == 1, "the guarded upsert matched nothing and inserted (matched %d, upserted %d)", res.MatchedCount, res.UpsertedCount)
	}
	got = carts(ctx, k, orders, user)
	k.Check(len(got) == 2, "the user now has 2 carts (got %d)", len(got))
}

// withUniqueCart adds a partial unique index: one CART per user. The second
// click's upsert then fails with a duplicate key, which add-to-cart
// ignores, and the positional $inc does the rest.
func withUniqueCart(ctx context.Context, k *cookbook.Kitchen) {
	orders := k.DB.Collection("orders")
	user := bson.NewObjectID()
	k.Step("with a partial unique index on {user_id, state} for carts, two clicks give one cart with qty 2")
	_, err := orders.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "user_id", Value: 1}, {Key: "state", Value: 1}},
		Options: options.Index().SetUnique(true).SetPartialFilterExpression(bson.M{"state": "CART"}),
	})
	k.OK(err, "createIndex unique partial")
	_, err = addToCart(ctx, orders, user, barrow)
	k.OK(err, "first click")
	_, err = addToCart(ctx, orders, user, barrow)
	k.Check(mongo.IsDuplicateKeyError(err), "the second click's upsert hits the unique index (err %v)", err)
	got := carts(ctx, k, orders, user)
	k.Check(len(got) == 1 && len(got[0].LineItems) == 1 && got[0].LineItems[0].Qty == 2 && got[0].SubTotal == 979400,
		"one cart, one line, qty 2, subtotal 979400 (got %+v)", got)
	k.UsesIndex(ctx, orders, bson.M{"user_id": user, "state": "CART", "line_items._id": barrow.ID}, nil, "user_id_1_state_1")
}

// increaseQty is the seed's loop: $inc the line if the order has the sku,
// else $push it guarded by $ne; retry if another writer got in between.
func increaseQty(ctx context.Context, k *cookbook.Kitchen) {
	orders := k.DB.Collection("orders_items")
	_, err := orders.InsertOne(ctx, bson.M{"_id": 1, "total": 0, "items": bson.A{}})
	k.OK(err, "insert order")
	add := func(sku string, price, qty int) {
		for range 3 {
			res, err := orders.UpdateOne(ctx, bson.M{"_id": 1, "items.sku": sku},
				bson.M{"$inc": bson.M{"total": price * qty, "items.$.qty": qty}})
			if !k.OK(err, "inc line") || res.MatchedCount == 1 {
				return
			}
			res, err = orders.UpdateOne(ctx, bson.M{"_id": 1, "items.sku": bson.M{"$ne": sku}},
				bson.M{"$inc": bson.M{"total": price * qty}, "$push": bson.M{"items": bson.M{"sku": sku, "qty": qty, "price": price}}})
			if !k.OK(err, "push line") || res.MatchedCount == 1 {
				return
			}
		}
	}
	k.Step("increase_qty: positional $inc when the sku is there, guarded $push when not")
	add("9092", 100, 2)
	add("1234", 50, 1)
	add("9092", 100, 3)
	var o struct {
		Total int `bson:"total"`
		Items []struct {
			SKU string `bson:"sku"`
			Qty int    `bson:"qty"`
		} `bson:"items"`
	}
	if k.OK(orders.FindOne(ctx, bson.M{"_id": 1}).Decode(&o), "find order") {
		k.Check(o.Total == 550 && len(o.Items) == 2 && o.Items[0].Qty == 5 && o.Items[1].Qty == 1,
			"total 550, 9092 x5, 1234 x1 (got %+v)", o)
	}
}
