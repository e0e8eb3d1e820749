package main

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

// shop holds the orders and inventory collections.
type shop struct {
	k                   *cookbook.Kitchen
	orders, inventories *mongo.Collection
}

// checkout moves an order from CART through PRE-AUTHORIZE to AUTHORIZED,
// reserving one inventory item per unit of sku. If the inventory runs out it
// compensates: it releases what it reserved and puts the order back in
// CART. It reports whether the order was authorized.
func (s shop) checkout(ctx context.Context, orderID int, sku string, qty int) bool {
	// Step 1: atomically change the order's state; only a cart can start.
	res, err := s.orders.UpdateOne(ctx, bson.M{"_id": orderID, "state": "CART"},
		bson.M{"$set": bson.M{"state": "PRE-AUTHORIZE"}})
	if !s.k.OK(err, "order to PRE-AUTHORIZE") || res.ModifiedCount != 1 {
		return false
	}
	// Step 2: reserve items one at a time, each an atomic findAndModify.
	for range qty {
		err := s.inventories.FindOneAndUpdate(ctx, bson.M{"sku": sku, "state": "AVAILABLE"},
			bson.M{"$set": bson.M{"state": "IN_CART", "order_id": orderID}}).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			s.compensate(ctx, orderID)
			return false
		}
		s.k.OK(err, "reserve item")
	}
	// Step 3: everything is valid, mark the order done.
	_, err = s.orders.UpdateOne(ctx, bson.M{"_id": orderID, "state": "PRE-AUTHORIZE"},
		bson.M{"$set": bson.M{"state": "AUTHORIZED"}})
	return s.k.OK(err, "order to AUTHORIZED")
}

// compensate returns every item the order reserved and the order to CART.
func (s shop) compensate(ctx context.Context, orderID int) {
	_, err := s.inventories.UpdateMany(ctx, bson.M{"order_id": orderID, "state": "IN_CART"},
		bson.M{"$set": bson.M{"state": "AVAILABLE"}, "$unset": bson.M{"order_id": ""}})
	s.k.OK(err, "release items")
	_, err = s.orders.UpdateOne(ctx, bson.M{"_id": orderID, "state": "PRE-AUTHORIZE"},
		bson.M{"$set": bson.M{"state": "CART"}})
	s.k.OK(err, "order back to CART")
}

// count counts inventory items of sku in state.
func (s shop) count(ctx context.Context, filter bson.M) int64 {
	n, err := s.inventories.CountDocuments(ctx, filter)
	s.k.OK(err, "count inventory")
	return n
}

// state returns an order's state.
func (s shop) state(ctx context.Context, orderID int) string {
	var o struct {
		State string `bson:"state"`
	}
	s.k.OK(s.orders.FindOne(ctx, bson.M{"_id": orderID}).Decode(&o), "find order")
	return o.State
}

func orderStates(ctx context.Context, k *cookbook.Kitchen) {
	s := shop{k: k, orders: k.DB.Collection("orders"), inventories: k.DB.Collection("inventory")}
	k.Step("compensation: orders move through states, inventory is reserved item by item")
	_, err := s.inventories.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "sku", Value: 1}, {Key: "state", Value: 1}}},
		{Keys: bson.D{{Key: "order_id", Value: 1}}, Options: options.Index().SetSparse(true)},
	})
	k.OK(err, "create inventory indexes")
	var items []any
	for range 3 {
		items = append(items, bson.M{"sku": "wheelbarrow", "state": "AVAILABLE"})
	}
	_, err = s.inventories.InsertMany(ctx, items)
	k.OK(err, "stock 3 wheelbarrows")
	_, err = s.orders.InsertMany(ctx, []any{bson.M{"_id": 1, "state": "CART"}, bson.M{"_id": 2, "state": "CART"}})
	k.OK(err, "insert 2 carts")

	ok := s.checkout(ctx, 1, "wheelbarrow", 2)
	k.Check(ok && s.state(ctx, 1) == "AUTHORIZED", "order 1 (2 units) is authorized (state %s)", s.state(ctx, 1))
	k.Check(s.count(ctx, bson.M{"order_id": 1}) == 2, "order 1 holds 2 items")

	k.Step("order 2 wants 2 units, only 1 is left: its steps are compensated")
	ok = s.checkout(ctx, 2, "wheelbarrow", 2)
	k.Check(!ok && s.state(ctx, 2) == "CART", "order 2 fails and is back in CART (state %s)", s.state(ctx, 2))
	k.Check(s.count(ctx, bson.M{"order_id": 2}) == 0, "order 2 holds no items")
	available := bson.M{"sku": "wheelbarrow", "state": "AVAILABLE"}
	k.Check(s.count(ctx, available) == 1, "the unit order 2 took is available again")
	k.UsesIndex(ctx, s.inventories, available, nil, "sku_1_state_1")
	k.UsesIndex(ctx, s.inventories, bson.M{"order_id": 2}, nil, "order_id_1")
}
