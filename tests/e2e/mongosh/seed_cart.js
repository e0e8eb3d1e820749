// Seed pattern: add-to-cart with a $ne-guarded upsert and a positional $inc
// (and what MongoDB does on the second click), plus increase_qty. See
// examples/cart.

load(__dirname + '/lib/checks.js');

const d = db.getSiblingDB('e2e_seed_cart');
d.dropDatabase();
const item = {_id: ObjectId(), slug: 'wheel-barrow-9092', sku: '9092', name: 'Extra Large Wheel Barrow', pricing: {retail: 589700, sale: 489700}};
function addToCart(orders, user) {
  let res, dup = false;
  try {
    res = orders.updateOne({user_id: user, state: 'CART', 'line_items._id': {$ne: item._id}}, {$push: {line_items: item}}, {upsert: true});
  } catch (e) {
    if (e.code !== 11000) throw e;
    dup = true;
  }
  orders.updateOne({user_id: user, state: 'CART', 'line_items._id': item._id}, {$inc: {'line_items.$.qty': 1, sub_total: item.pricing.sale}});
  return dup ? 'duplicate' : res.upsertedCount;
}
const summary = (orders, user) => orders.find({user_id: user, state: 'CART'}).toArray().map(o => [o.line_items.length, o.line_items[0].qty, o.sub_total]);

// the seed's sequence, as MongoDB runs it: the second click's guarded upsert matches no cart and inserts another
const user = ObjectId();
eq(addToCart(d.orders_naive, user), 1, 'first click upserts the cart');
eq(summary(d.orders_naive, user), [[1, 1, 489700]], 'one cart, qty 1');
eq(addToCart(d.orders_naive, user), 1, 'second click: the $ne-guarded upsert inserts a second cart');
eq(d.orders_naive.countDocuments({user_id: user, state: 'CART'}), 2, 'two carts');

// fix: one CART per user by a partial unique index
d.orders.createIndex({user_id: 1, state: 1}, {unique: true, partialFilterExpression: {state: 'CART'}});
const u2 = ObjectId();
eq(addToCart(d.orders, u2), 1, 'first click');
eq(addToCart(d.orders, u2), 'duplicate', 'second click hits the unique index');
eq(summary(d.orders, u2), [[1, 2, 979400]], 'one cart, qty 2, subtotal 979400');
ixscan(d.orders, {user_id: u2, state: 'CART', 'line_items._id': item._id}, null, 'user_id_1_state_1');

// increase_qty: positional $inc, else a $ne-guarded $push
d.orders_items.insertOne({_id: 1, total: 0, items: []});
function increaseQty(sku, price, qty) {
  for (;;) {
    if (d.orders_items.updateOne({_id: 1, 'items.sku': sku}, {$inc: {total: price * qty, 'items.$.qty': qty}}).matchedCount) return;
    if (d.orders_items.updateOne({_id: 1, 'items.sku': {$ne: sku}},
      {$inc: {total: price * qty}, $push: {items: {sku: sku, qty: qty, price: price}}}).matchedCount) return;
  }
}
increaseQty('9092', 100, 2); increaseQty('1234', 50, 1); increaseQty('9092', 100, 3);
const o = d.orders_items.findOne({_id: 1});
eq([o.total, o.items.map(i => [i.sku, i.qty])], [550, [['9092', 5], ['1234', 1]]], 'increase_qty');
