# Expected values of decimal exp, ln, log10, log and non-whole powers at 34 digits,
# from Python's decimal module (correctly rounded), for the values package's test.
import random
from decimal import Decimal, Context, ROUND_HALF_EVEN
ctx = Context(prec=34, rounding=ROUND_HALF_EVEN, Emax=6144, Emin=-6143, clamp=1, traps=[])
r = random.Random(34)
def rnd():
    digits = r.randint(1, 34)
    coef = r.randint(1, 10**digits - 1)
    exp = r.choice([r.randint(-40, 5), r.randint(-6176, 6111 - digits + 34), -digits + 1, -digits])
    return Decimal(coef).scaleb(exp, Context(prec=40, Emax=10**6, Emin=-10**6))
out = []
for _ in range(120):
    x = rnd()
    out.append(("ln", x, None, ctx.ln(x)))
    out.append(("log10", x, None, ctx.log10(x)))
for _ in range(120):
    x = Decimal(r.randint(-10**12, 10**12)).scaleb(-r.randint(0, 14))
    if r.random() < 0.2:
        x = Decimal(r.randint(-1000, 1000)).scaleb(r.randint(0, 1))
    out.append(("exp", x, None, ctx.exp(x)))
for _ in range(60):
    x, b = rnd(), rnd()
    if b == 1: continue
    # MongoDB's Decimal128::logarithm(base): ln x and ln b each rounded to
    # 34 digits, then divided (bases 2 and 10 excepted, which these are not).
    out.append(("log", x, b, ctx.divide(ctx.ln(x), ctx.ln(b))))
for _ in range(60):
    x = Decimal(r.randint(1, 10**8)).scaleb(-r.randint(0, 8))
    y = Decimal(r.randint(-4000, 4000)).scaleb(-r.randint(1, 3))
    if y == y.to_integral_value(): continue
    out.append(("pow", x, y, ctx.power(x, y)))
with open("decimal_transcendental.txt", "w") as f:
    f.write("# op x [y] expected: Python's decimal module at 34 digits, rounded half to even (decimal_transcendental.py)\n")
    for op, x, y, want in out:
        f.write(" ".join([op, str(x)] + ([str(y)] if y is not None else []) + [str(want)]) + "\n")
