"""stripe-python (Debian's python3-stripe), unmodified, over a realistic flow against the
Stripe twin: customers, payment methods (attach, list), payment intents confirmed with Python
booleans, charges and refunds, a manual capture, products, prices and a subscription, invoices,
the balance and its transactions, events, search and a delete. Usage: stripe_python_flow.py KEY
API_BASE. Prints one line per step ("ok  " or "FAIL") and "passed N"; exits 1 when a step
failed."""
import sys, stripe
from flow import step, finish


def fail(what):
    raise AssertionError(what)


def refused(call, status, needle):
    """The StripeError call raises, checked for its HTTP status and message."""
    try:
        call()
    except stripe.error.StripeError as e:
        if e.http_status != status or needle not in str(e):
            fail("%s %s" % (e.http_status, e))
        return e.http_status
    fail("no error")


key, base = sys.argv[1], sys.argv[2]
stripe.api_key = key
stripe.api_base = base
stripe.max_network_retries = 0
cus = stripe.Customer.create(email="py@example.com", name="Py")
step("Customer.create", lambda: cus.id)
step("Customer.retrieve", lambda: stripe.Customer.retrieve(cus.id).email)
# Stripe's Request-Id header, which stripe-python keeps as last_response.request_id
step("last_response.request_id", lambda: cus.last_response.request_id.startswith("req_") or fail(cus.last_response.request_id))
step("Customer.modify", lambda: stripe.Customer.modify(cus.id, metadata={"plan": "pro"}).metadata["plan"])
pm = stripe.PaymentMethod.attach("pm_card_visa", customer=cus.id)
step("PaymentMethod.attach", lambda: pm.id)
step("PaymentMethod.list", lambda: [p.id for p in stripe.PaymentMethod.list(customer=cus.id, type="card")])
pi = stripe.PaymentIntent.create(amount=1500, currency="usd", customer=cus.id, payment_method=pm.id, confirm=True, off_session=True)
step("PaymentIntent.create confirm=True", lambda: pi.status)
step("pi.review is None", lambda: pi.review)
ch = stripe.Charge.retrieve(pi.latest_charge)
step("Charge.retrieve", lambda: ch.amount)
step("charge.fraud_details", lambda: ch.fraud_details)
step("Refund.create", lambda: stripe.Refund.create(charge=ch.id, amount=500).status)
step("Charge.list", lambda: len(stripe.Charge.list(customer=cus.id).data))
pi2 = stripe.PaymentIntent.create(amount=900, currency="usd", capture_method="manual", payment_method="pm_card_visa", confirm=True)
step("manual capture", lambda: stripe.PaymentIntent.capture(pi2.id).status)
step("PaymentIntent.cancel", lambda: stripe.PaymentIntent.cancel(stripe.PaymentIntent.create(amount=100, currency="usd").id).status)
prod = stripe.Product.create(name="Plan")
price = stripe.Price.create(product=prod.id, unit_amount=1000, currency="usd", recurring={"interval": "month"})
step("Price.create", lambda: price.id)
sub = stripe.Subscription.create(customer=cus.id, items=[{"price": price.id}], default_payment_method=pm.id)
step("Subscription.create", lambda: sub.status)
step("Subscription.modify cancel_at_period_end=True", lambda: stripe.Subscription.modify(sub.id, cancel_at_period_end=True).cancel_at_period_end)
step("Invoice.list", lambda: [i.status for i in stripe.Invoice.list(customer=cus.id)])
# an endpoint the twin does not serve is its loud 501 naming the route, not an invoice
# called "upcoming" refused for its parameter
step("Invoice.upcoming is the twin's 501", lambda: refused(lambda: stripe.Invoice.upcoming(customer=cus.id), 501, "/v1/invoices/upcoming"))
step("Balance.retrieve", lambda: stripe.Balance.retrieve().available[0].amount)
step("BalanceTransaction.list", lambda: len(stripe.BalanceTransaction.list(limit=3).data))
step("Event.list", lambda: [e.type for e in stripe.Event.list(limit=3)])
step("Customer.search", lambda: len(stripe.Customer.search(query="email:'py@example.com'").data))
step("Product.list active=True", lambda: len(stripe.Product.list(active=True).data))
step("Customer.delete", lambda: stripe.Customer.delete(cus.id).deleted)
finish()
