"""The retail service operations, their registry, and one entry point to execute them.

Incognita (the Incognita paper, sections 3.2-3.3 and A.3) keeps the source benchmark's fifteen
service-side tools and changes only who holds them. Each tool here is a plain typed
function over a `World`. Preconditions and effects follow tau2-bench's retail toolkit
(sierra-research/tau2-bench, src/tau2/domains/retail/tools.py) so that replaying its gold
actions yields the same final state, down to its float arithmetic:

- item modification records the *unrounded* price difference in the payment history,
  and moves a gift card's balance by it, rounding the balance to two decimals;
- an exchange stores the price difference rounded to two decimals and moves no money;
- cancelling refunds every entry of the payment history (gift cards immediately);
- return / exchange item lists are stored sorted; the address and payment changes accept
  any status containing ``pending`` while cancel and item modification require exactly
  ``pending``; the name and email lookups ignore case and accents, the zip must match.

Decisions
- The fifteen: the thirteen operations of the six desks plus ``calculate`` and
  ``transfer_to_human_agents``. This is both tau-bench's set without ``think`` and
  tau2-bench's set without ``get_item_details``. ``get_item_details`` is implemented for
  replaying tau2 gold actions and is registered only in `TAU2_TOOLS`.
- Tool -> desk map (section 3.2, A.3): identity lookup holds the two ``find_user_id_*``;
  account holds ``get_user_details``, ``modify_user_address`` and
  ``transfer_to_human_agents`` (handing a customer over is an account-level act);
  order records holds ``get_order_details``; catalogue holds ``list_all_product_types``,
  ``get_product_details`` (and ``get_item_details``); pending-order operations holds the
  four ``*_pending_order*`` tools and ``calculate`` (settling price differences and order
  totals is its work; the paper says the three read-only desks do nothing but their one
  kind of inspection); returns-and-exchanges holds the two ``*_delivered_order_items``.
- Fixed upstream bug (tau2-bench issues 317 and 318): upstream item modification gives
  every modified line the price and options of the *last* replacement variant. Here each
  line gets its own variant's price and options. `TAU2_UPSTREAM_TOOLS` keeps the upstream
  behaviour, only to reproduce upstream hashes; the payment history and gift-card
  balances are identical in both (the difference was always computed per item).
- An exchange with empty item lists records a price difference of ``0.0``; upstream stores
  the integer ``0`` there (its only unvalidated assignment), so the two serialize
  differently in that degenerate call and nowhere else.
- Every tool checks all its preconditions before it changes anything, so a call that
  fails leaves the world untouched (upstream could half-apply a cancellation on
  inconsistent data; `World` rejects such data). A write cannot be undone: there is no
  operation that restores a previous state.
- ``calculate`` evaluates the same arithmetic as upstream's restricted ``eval`` (digits,
  ``+ - * / ( ) .`` and spaces, hence also ``**`` and ``//``) with an AST walker instead
  of ``eval``, and refuses integer powers whose result would exceed a million bits.
- Errors are `ToolError` with a stable ``code`` and a message that names the offending
  value. `execute` returns them instead of raising, with results as JSON data.
"""

from __future__ import annotations

import ast
import json
import operator
import typing
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, create_model

from confide.envs.incognita.world import (
    CANCEL_REASONS,
    Address,
    GiftCard,
    Order,
    Payment,
    PaymentMethod,
    Product,
    User,
    Variant,
    World,
)


class ToolError(Exception):
    """A refused or failed tool call: what was wrong, with a stable machine-readable code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolError) and (self.code, self.message) == (
            other.code,
            other.message,
        )

    def __hash__(self) -> int:
        return hash((self.code, self.message))


class ToolKind(StrEnum):
    """Whether a tool reads the database, writes it, or touches neither."""

    READ = "read"
    WRITE = "write"
    GENERIC = "generic"


class Desk(StrEnum):
    """The six role desks of the socially distributed condition (the Incognita paper §A.3)."""

    ACCOUNT = "account"
    RETURNS_EXCHANGES = "returns_exchanges"
    CATALOGUE = "catalogue"
    ORDER_RECORDS = "order_records"
    IDENTITY_LOOKUP = "identity_lookup"
    PENDING_ORDERS = "pending_orders"


# ----- argument types (their descriptions become the tools' JSON schemas) -------------------

OrderId = Annotated[
    str, Field(description="Order identifier including its leading '#', e.g. '#W1234567'.")
]
UserId = Annotated[str, Field(description="Internal customer identifier, e.g. 'ana_reyes_4821'.")]
ProductId = Annotated[
    str, Field(description="Product-type identifier; it is not an item identifier.")
]
ItemId = Annotated[
    str, Field(description="Item (variant) identifier; it is not a product identifier.")
]
ItemIds = Annotated[
    list[str],
    Field(description="Item identifiers on the order; repeat an id to act on several units."),
]
NewItemIds = Annotated[
    list[str],
    Field(
        description="Replacement item identifiers, position by position, each a variant of "
        "the same product as the item it replaces."
    ),
]
PaymentMethodId = Annotated[
    str,
    Field(
        description="Payment method identifier from the customer's profile, e.g. "
        "'gift_card_1234567', 'credit_card_1234567' or 'paypal_1234567'."
    ),
]
CancelReasonArg = Annotated[
    str,
    Field(description="Why the order is cancelled: 'no longer needed' or 'ordered by mistake'."),
]
Email = Annotated[str, Field(description="The customer's email address.")]
FirstName = Annotated[str, Field(description="The customer's first name.")]
LastName = Annotated[str, Field(description="The customer's last name.")]
Zip = Annotated[str, Field(description="Postal zip code, e.g. '98402'.")]
Address1 = Annotated[str, Field(description="First address line, e.g. '17 Alder Lane'.")]
Address2 = Annotated[str, Field(description="Second address line, e.g. 'Apt 4', or ''.")]
City = Annotated[str, Field(description="City.")]
State = Annotated[str, Field(description="State code, e.g. 'WA'.")]
Country = Annotated[str, Field(description="Country, e.g. 'USA'.")]
Expression = Annotated[
    str,
    Field(description="Arithmetic with digits, + - * / ( ) . and spaces, e.g. '12.5 * 3 - 4'."),
]
Summary = Annotated[str, Field(description="A short summary of the customer's issue.")]

ToolReturn = str | dict[str, str] | Order | User | Product | Variant
_V = TypeVar("_V")


# ----- lookups ------------------------------------------------------------------------------


def _found(table: Mapping[str, _V], key: str, code: str, message: str) -> _V:
    """`table[key]`, or `ToolError` `code` with `message` when there is none."""
    value = table.get(key)
    if value is None:
        raise ToolError(code, message)
    return value


def _order(world: World, order_id: str) -> Order:
    return _found(world.orders, order_id, "order_not_found", f"no order with id {order_id!r}")


def _user(world: World, user_id: str) -> User:
    return _found(
        world.users, user_id, "user_not_found", f"no customer with user id {user_id!r}"
    )


def _product(world: World, product_id: str) -> Product:
    return _found(
        world.products,
        product_id,
        "product_not_found",
        f"no product type with id {product_id!r}",
    )


def _variant(world: World, product_id: str, item_id: str) -> Variant:
    product = _product(world, product_id)
    return _found(
        product.variants,
        item_id,
        "variant_not_found",
        f"item {item_id!r} is not a variant of product {product.name!r} ({product_id!r})",
    )


def _payment_method(world: World, user_id: str, payment_method_id: str) -> PaymentMethod:
    return _found(
        _user(world, user_id).payment_methods,
        payment_method_id,
        "payment_method_not_found",
        f"customer {user_id!r} has no payment method {payment_method_id!r}",
    )


def _require_status(order: Order, status: str, action: str, *, containing: bool = False) -> None:
    """The order's status must be `status` exactly (or, `containing`, any status that
    contains it), else `ToolError` ``order_not_<status>``."""
    if not (status in order.status if containing else order.status == status):
        raise ToolError(
            f"order_not_{status}",
            f"order {order.order_id} is {order.status!r}; only a {status} order can be {action}",
        )


def _check_item_counts(order: Order, item_ids: list[str]) -> None:
    on_order = [item.item_id for item in order.items]
    for item_id in item_ids:
        if item_ids.count(item_id) > on_order.count(item_id):
            raise ToolError(
                "item_not_in_order",
                f"order {order.order_id} holds {on_order.count(item_id)} unit(s) of item "
                f"{item_id!r}, fewer than the {item_ids.count(item_id)} requested",
            )


def _check_same_length(item_ids: list[str], new_item_ids: list[str]) -> None:
    if len(item_ids) != len(new_item_ids):
        raise ToolError(
            "item_count_mismatch",
            f"{len(item_ids)} item(s) to replace but {len(new_item_ids)} replacement(s) given",
        )


def _replacements(
    world: World, order: Order, item_ids: list[str], new_item_ids: list[str], *, distinct: bool
) -> tuple[list[Variant], float]:
    """Each replacement's variant (same product, available) and the summed price change."""
    variants: list[Variant] = []
    difference: float = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        if distinct and item_id == new_item_id:
            raise ToolError(
                "same_item", f"replacement for item {item_id!r} must be a different item"
            )
        line = next(entry for entry in order.items if entry.item_id == item_id)
        variant = _variant(world, line.product_id, new_item_id)
        if not variant.available:
            raise ToolError("variant_unavailable", f"item {new_item_id!r} is not available")
        variants.append(variant)
        difference += variant.price - line.price
    return variants, difference


def _check_gift_card_covers(method: PaymentMethod, amount: float, what: str) -> None:
    if isinstance(method, GiftCard) and method.balance < amount:
        raise ToolError(
            "insufficient_gift_card_balance",
            f"gift card {method.id} holds {method.balance}, not enough for {what} of {amount}",
        )


def _move_gift_card_balance(world: World, user_id: str, method_id: str, delta: float) -> None:
    """Add `delta` to a gift card's balance, rounded to two decimals (no-op otherwise)."""
    if not isinstance(world.users[user_id].payment_methods[method_id], GiftCard):
        return
    card = world.user_for_write(user_id).payment_methods[method_id]
    if isinstance(card, GiftCard):
        card.balance = round(card.balance + delta, 2)


def _fold(text: str) -> str:
    """Case- and accent-insensitive form of a name or email (strip, drop marks, casefold)."""
    decomposed = unicodedata.normalize("NFD", text.strip())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


# ----- identity lookup ----------------------------------------------------------------------


def find_user_id_by_email(world: World, email: Email) -> str:
    """Find a customer's user id from their email address.

    Case and accents are ignored. Error ``user_not_found``.
    """
    wanted = _fold(email)
    for user_id, user in world.users.items():
        if _fold(user.email) == wanted:
            return user_id
    raise ToolError("user_not_found", f"no customer with email {email!r}")


def find_user_id_by_name_zip(
    world: World, first_name: FirstName, last_name: LastName, zip: Zip
) -> str:
    """Find a customer's user id from their first name, last name and zip code.

    Names ignore case and accents; the zip must match exactly. Error ``user_not_found``.
    """
    first, last = _fold(first_name), _fold(last_name)
    for user_id, user in world.users.items():
        if (
            _fold(user.name.first_name) == first
            and _fold(user.name.last_name) == last
            and user.address.zip == zip
        ):
            return user_id
    raise ToolError(
        "user_not_found", f"no customer named {first_name} {last_name} with zip {zip!r}"
    )


# ----- account ------------------------------------------------------------------------------


def get_user_details(world: World, user_id: UserId) -> User:
    """Look up a customer's profile: name, email, default address, payment methods, orders."""
    return _user(world, user_id)


def modify_user_address(
    world: World,
    user_id: UserId,
    address1: Address1,
    address2: Address2,
    city: City,
    state: State,
    country: Country,
    zip: Zip,
) -> User:
    """Change a customer's default shipping address.

    Error ``user_not_found``. Effect: the profile's address is replaced.
    """
    _user(world, user_id)
    user = world.user_for_write(user_id)
    user.address = Address(
        address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
    )
    return user


def transfer_to_human_agents(world: World, summary: Summary) -> str:
    """Hand the customer over to a human agent, with a summary of the issue.

    Changes nothing in the database.
    """
    return "Transfer successful"


# ----- order records ------------------------------------------------------------------------


def get_order_details(world: World, order_id: OrderId) -> Order:
    """Look up an order: status, items, address, fulfilment and payment history."""
    return _order(world, order_id)


# ----- catalogue ----------------------------------------------------------------------------


def list_all_product_types(world: World) -> dict[str, str]:
    """List every product type as a map from product name to product id, sorted by name."""
    by_name = {product.name: product.product_id for product in world.products.values()}
    return dict(sorted(by_name.items()))


def get_product_details(world: World, product_id: ProductId) -> Product:
    """Look up a product type and all its variants with options, availability and price."""
    return _product(world, product_id)


def get_item_details(world: World, item_id: ItemId) -> Variant:
    """Look up one item (variant) by its item id: options, availability and price.

    tau2-bench only; not one of the fifteen (see module docstring). Error ``item_not_found``.
    """
    for product in world.products.values():
        if item_id in product.variants:
            return product.variants[item_id]
    raise ToolError("item_not_found", f"no item with id {item_id!r}")


# ----- pending-order operations -------------------------------------------------------------


def cancel_pending_order(world: World, order_id: OrderId, reason: CancelReasonArg) -> Order:
    """Cancel a pending order and refund what was paid for it.

    Preconditions, in order: the order exists (``order_not_found``); its status is exactly
    ``pending`` (``order_not_pending``); the reason is one of the two accepted ones
    (``invalid_cancel_reason``). Effects: status ``cancelled``, the reason recorded, one
    refund appended per payment-history entry, and gift cards credited at once.
    """
    order = _order(world, order_id)
    _require_status(order, "pending", "cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolError(
            "invalid_cancel_reason",
            f"reason {reason!r} is not accepted; use 'no longer needed' or 'ordered by mistake'",
        )
    for payment in order.payment_history:
        _payment_method(world, order.user_id, payment.payment_method_id)
    order = world.order_for_write(order_id)
    refunds = [
        Payment(
            transaction_type="refund",
            amount=payment.amount,
            payment_method_id=payment.payment_method_id,
        )
        for payment in order.payment_history
    ]
    for refund in refunds:
        _move_gift_card_balance(world, order.user_id, refund.payment_method_id, refund.amount)
    order.status = "cancelled"
    order.cancel_reason = reason
    order.payment_history.extend(refunds)
    return order


def modify_pending_order_address(
    world: World,
    order_id: OrderId,
    address1: Address1,
    address2: Address2,
    city: City,
    state: State,
    country: Country,
    zip: Zip,
) -> Order:
    """Change the shipping address of a pending order.

    Preconditions: the order exists; its status contains ``pending`` (item-modified orders
    included, as upstream). Effect: the order's address is replaced.
    """
    _require_status(_order(world, order_id), "pending", "modified", containing=True)
    order = world.order_for_write(order_id)
    order.address = Address(
        address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
    )
    return order


def modify_pending_order_payment(
    world: World, order_id: OrderId, payment_method_id: PaymentMethodId
) -> Order:
    """Pay a pending order with a different one of the customer's payment methods.

    Preconditions, in order: the order exists; its status contains ``pending``; the method
    belongs to the order's customer (``payment_method_not_found``); the history holds
    exactly one entry and it is a payment (``payment_history_not_single``); the method
    differs from the current one (``same_payment_method``); a gift card covers the amount
    (``insufficient_gift_card_balance``). Effects: a payment by the new method and a
    refund to the old one are appended; gift-card balances move by the amount.
    """
    order = _order(world, order_id)
    _require_status(order, "pending", "modified", containing=True)
    method = _payment_method(world, order.user_id, payment_method_id)
    history = order.payment_history
    if len(history) != 1 or history[0].transaction_type != "payment":
        raise ToolError(
            "payment_history_not_single",
            f"order {order_id} has {len(history)} payment-history entries; the payment "
            "method can be changed only while it has exactly one payment",
        )
    old_method_id = history[0].payment_method_id
    if old_method_id == payment_method_id:
        raise ToolError(
            "same_payment_method", f"order {order_id} is already paid with {payment_method_id}"
        )
    amount = history[0].amount
    _check_gift_card_covers(method, amount, "the order total")
    order = world.order_for_write(order_id)
    order.payment_history.extend(
        [
            Payment(transaction_type="payment", amount=amount, payment_method_id=payment_method_id),
            Payment(transaction_type="refund", amount=amount, payment_method_id=old_method_id),
        ]
    )
    _move_gift_card_balance(world, order.user_id, payment_method_id, -amount)
    _move_gift_card_balance(world, order.user_id, old_method_id, amount)
    return order


def _modify_items(
    world: World,
    order_id: str,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: str,
    *,
    reuse_last_variant: bool,
) -> Order:
    order = _order(world, order_id)
    _require_status(order, "pending", "modified")
    _check_item_counts(order, item_ids)
    _check_same_length(item_ids, new_item_ids)
    variants, difference = _replacements(world, order, item_ids, new_item_ids, distinct=True)
    method = _payment_method(world, order.user_id, payment_method_id)
    _check_gift_card_covers(method, difference, "the price difference")
    order = world.order_for_write(order_id)
    order.payment_history.append(
        Payment(
            transaction_type="payment" if difference > 0 else "refund",
            amount=abs(difference),
            payment_method_id=payment_method_id,
        )
    )
    _move_gift_card_balance(world, order.user_id, payment_method_id, -difference)
    for item_id, new_item_id, variant in zip(item_ids, new_item_ids, variants, strict=True):
        source = variants[-1] if reuse_last_variant else variant
        line = next(entry for entry in order.items if entry.item_id == item_id)
        line.item_id = new_item_id
        line.price = source.price
        line.options = dict(source.options)
    order.status = "pending (item modified)"
    return order


def modify_pending_order_items(
    world: World,
    order_id: OrderId,
    item_ids: ItemIds,
    new_item_ids: NewItemIds,
    payment_method_id: PaymentMethodId,
) -> Order:
    """Swap items of a pending order for other variants of the same products (once only).

    Preconditions, in order: the order exists; its status is exactly ``pending``
    (``order_not_pending``: after one modification the order can no longer be modified or
    cancelled); the order holds every listed unit (``item_not_in_order``); the two lists
    have the same length (``item_count_mismatch``); each replacement differs from its item
    (``same_item``), is a variant of the same product (``variant_not_found``) and is
    available (``variant_unavailable``); the method is the customer's
    (``payment_method_not_found``); a gift card covers the difference
    (``insufficient_gift_card_balance``). Effects: a payment (difference > 0) or refund of
    the unrounded difference by the given method; a gift card's balance moves by it
    (rounded to cents); each line takes its replacement's id, price and options; status
    ``pending (item modified)``.
    """
    return _modify_items(
        world, order_id, item_ids, new_item_ids, payment_method_id, reuse_last_variant=False
    )


def modify_pending_order_items_upstream(
    world: World,
    order_id: OrderId,
    item_ids: ItemIds,
    new_item_ids: NewItemIds,
    payment_method_id: PaymentMethodId,
) -> Order:
    """Upstream tau2-bench item modification, bug included (issues 317/318).

    Same as `modify_pending_order_items` except that every modified line takes the price
    and options of the last replacement variant. Only for reproducing upstream hashes.
    """
    return _modify_items(
        world, order_id, item_ids, new_item_ids, payment_method_id, reuse_last_variant=True
    )


# ----- returns and exchanges ----------------------------------------------------------------


def return_delivered_order_items(
    world: World, order_id: OrderId, item_ids: ItemIds, payment_method_id: PaymentMethodId
) -> Order:
    """Request the return of items of a delivered order (once per order).

    Preconditions, in order: the order exists; its status is exactly ``delivered``
    (``order_not_delivered``); the method belongs to the customer
    (``payment_method_not_found``) and is a gift card or the order's original method
    (``refund_method_not_allowed``); the order holds every listed unit
    (``item_not_in_order``). Effects: status ``return requested``, the items (sorted) and
    the refund method recorded.
    """
    order = _order(world, order_id)
    _require_status(order, "delivered", "returned")
    method = _payment_method(world, order.user_id, payment_method_id)
    original = order.payment_history[0].payment_method_id
    if not isinstance(method, GiftCard) and payment_method_id != original:
        raise ToolError(
            "refund_method_not_allowed",
            f"a refund for order {order_id} goes to its original method {original} or to a "
            f"gift card, not to {payment_method_id}",
        )
    _check_item_counts(order, item_ids)
    order = world.order_for_write(order_id)
    order.status = "return requested"
    order.return_items = sorted(item_ids)
    order.return_payment_method_id = payment_method_id
    return order


def exchange_delivered_order_items(
    world: World,
    order_id: OrderId,
    item_ids: ItemIds,
    new_item_ids: NewItemIds,
    payment_method_id: PaymentMethodId,
) -> Order:
    """Request the exchange of items of a delivered order for other variants (once only).

    Preconditions, in order: the order exists; its status is exactly ``delivered``
    (``order_not_delivered``); the order holds every listed unit (``item_not_in_order``);
    the lists have the same length (``item_count_mismatch``); each replacement is a variant
    of the same product (``variant_not_found``) and available (``variant_unavailable``);
    the method is the customer's (``payment_method_not_found``); a gift card covers the
    difference (``insufficient_gift_card_balance``). Effects: status ``exchange
    requested``; old and new items (each list sorted), the method and the difference
    rounded to cents recorded; no money moves yet.
    """
    order = _order(world, order_id)
    _require_status(order, "delivered", "exchanged")
    _check_item_counts(order, item_ids)
    _check_same_length(item_ids, new_item_ids)
    _, difference = _replacements(world, order, item_ids, new_item_ids, distinct=False)
    difference = round(difference, 2)
    method = _payment_method(world, order.user_id, payment_method_id)
    _check_gift_card_covers(method, difference, "the price difference")
    order = world.order_for_write(order_id)
    order.status = "exchange requested"
    order.exchange_items = sorted(item_ids)
    order.exchange_new_items = sorted(new_item_ids)
    order.exchange_payment_method_id = payment_method_id
    order.exchange_price_difference = float(difference)
    return order


# ----- calculate ----------------------------------------------------------------------------

_CALC_CHARS = frozenset("0123456789+-*/(). ")
_MAX_POWER_BITS = 1_000_000
_BINARY_OPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}


def _arithmetic(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return typing.cast(int | float, node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY_OPS:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if (
            isinstance(node.op, ast.Pow)
            and isinstance(left, int)
            and isinstance(right, int)
            and abs(left) > 1
            and right * max(abs(left).bit_length(), 1) > _MAX_POWER_BITS
        ):
            raise ToolError("invalid_expression", "the power in the expression is too large")
        result: int | float = _BINARY_OPS[type(node.op)](left, right)
        return result
    raise ToolError("invalid_expression", "the expression is not plain arithmetic")


def calculate(world: World, expression: Expression) -> str:
    """Evaluate an arithmetic expression; the result is rounded to two decimals.

    Errors ``invalid_expression`` (characters other than digits, ``+ - * / ( ) .`` and
    spaces, a syntax error, or an arithmetic error such as division by zero).
    """
    if not set(expression) <= _CALC_CHARS:
        raise ToolError(
            "invalid_expression",
            f"{expression!r} may contain only digits, + - * / ( ) . and spaces",
        )
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        value = float(_arithmetic(tree.body))
    except SyntaxError as exc:
        raise ToolError("invalid_expression", f"{expression!r} is not valid arithmetic") from exc
    except (ArithmeticError, TypeError) as exc:
        raise ToolError("invalid_expression", f"{expression!r} cannot be computed: {exc}") from exc
    return str(round(value, 2))


# ----- registry and execution ---------------------------------------------------------------


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _strip_titles(value) for key, value in schema.items() if key != "title"}
    if isinstance(schema, list):
        return [_strip_titles(value) for value in schema]
    return schema


def _describe(error: Mapping[str, Any]) -> str:
    name = ".".join(str(part) for part in error["loc"]) or "(arguments)"
    if error["type"] == "missing":
        return f"missing argument {name!r}"
    if error["type"] == "extra_forbidden":
        return f"unexpected argument {name!r}"
    return f"argument {name!r}: {error['msg']} (got {error['input']!r})"


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool: its function, argument model, kind and the desk that holds it."""

    name: str
    function: Callable[..., ToolReturn]
    kind: ToolKind
    desk: Desk
    arguments: type[BaseModel] = field(repr=False)

    @property
    def description(self) -> str:
        """The first paragraph of the function's docstring, shown to whoever holds the tool."""
        doc = self.function.__doc__ or ""
        return " ".join(doc.strip().split("\n\n")[0].split())

    def parameters_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments (an object with no extra properties)."""
        schema: dict[str, Any] = _strip_titles(self.arguments.model_json_schema())
        schema.setdefault("required", [])
        return schema

    def function_schema(self) -> dict[str, Any]:
        """The tool in OpenAI function-calling form."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters_schema(),
            },
        }

    def admit(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments, or `ToolError` ``inadmissible_arguments``."""
        if not isinstance(arguments, Mapping):
            raise ToolError(
                "inadmissible_arguments",
                f"arguments of {self.name} must be an object, got {type(arguments).__name__}",
            )
        try:
            validated = self.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(_describe(error) for error in exc.errors())
            raise ToolError("inadmissible_arguments", f"{self.name}: {problems}") from exc
        return {name: getattr(validated, name) for name in type(validated).model_fields}


def _spec(function: Callable[..., ToolReturn], kind: ToolKind, desk: Desk) -> ToolSpec:
    name = function.__name__.removesuffix("_upstream")
    hints = typing.get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {
        param: (hint, ...) for param, hint in hints.items() if param not in ("world", "return")
    }
    model = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="forbid", strict=True), **fields
    )
    return ToolSpec(name=name, function=function, kind=kind, desk=desk, arguments=model)


def _registry(specs: list[ToolSpec]) -> Mapping[str, ToolSpec]:
    return MappingProxyType({spec.name: spec for spec in specs})


_R, _W, _G = ToolKind.READ, ToolKind.WRITE, ToolKind.GENERIC
_FIFTEEN: list[ToolSpec] = [
    _spec(find_user_id_by_email, _R, Desk.IDENTITY_LOOKUP),
    _spec(find_user_id_by_name_zip, _R, Desk.IDENTITY_LOOKUP),
    _spec(get_user_details, _R, Desk.ACCOUNT),
    _spec(modify_user_address, _W, Desk.ACCOUNT),
    _spec(transfer_to_human_agents, _G, Desk.ACCOUNT),
    _spec(get_order_details, _R, Desk.ORDER_RECORDS),
    _spec(list_all_product_types, _R, Desk.CATALOGUE),
    _spec(get_product_details, _R, Desk.CATALOGUE),
    _spec(cancel_pending_order, _W, Desk.PENDING_ORDERS),
    _spec(modify_pending_order_address, _W, Desk.PENDING_ORDERS),
    _spec(modify_pending_order_payment, _W, Desk.PENDING_ORDERS),
    _spec(modify_pending_order_items, _W, Desk.PENDING_ORDERS),
    _spec(calculate, _G, Desk.PENDING_ORDERS),
    _spec(return_delivered_order_items, _W, Desk.RETURNS_EXCHANGES),
    _spec(exchange_delivered_order_items, _W, Desk.RETURNS_EXCHANGES),
]
_ITEM_LOOKUP = _spec(get_item_details, _R, Desk.CATALOGUE)

SERVICE_TOOLS: Mapping[str, ToolSpec] = _registry(_FIFTEEN)
"""The fifteen service tools of Incognita (name -> spec)."""

TAU2_TOOLS: Mapping[str, ToolSpec] = _registry([*_FIFTEEN, _ITEM_LOOKUP])
"""The fifteen plus tau2-bench's ``get_item_details``, for replaying tau2 gold actions."""

TAU2_UPSTREAM_TOOLS: Mapping[str, ToolSpec] = _registry(
    [
        *(spec for spec in _FIFTEEN if spec.name != "modify_pending_order_items"),
        _spec(modify_pending_order_items_upstream, _W, Desk.PENDING_ORDERS),
        _ITEM_LOOKUP,
    ]
)
"""`TAU2_TOOLS` with upstream's unfixed item modification, to reproduce upstream hashes."""

TOOL_DESKS: Mapping[str, Desk] = MappingProxyType(
    {spec.name: spec.desk for spec in TAU2_TOOLS.values()}
)
"""Which desk holds each tool in the socially distributed condition."""


def _as_json(result: ToolReturn) -> JsonValue:
    if isinstance(result, BaseModel):
        return typing.cast(JsonValue, result.model_dump(mode="json"))
    if isinstance(result, dict):
        return dict(result)
    return result


def execute(
    world: World,
    name: str,
    arguments: Mapping[str, Any],
    tools: Mapping[str, ToolSpec] = SERVICE_TOOLS,
) -> JsonValue | ToolError:
    """Run tool `name` on `world` (mutating it for writes); the JSON result or the error.

    Unknown names give ``unknown_tool``; arguments that do not fit the tool's schema give
    ``inadmissible_arguments`` and the tool is not run.
    """
    spec = tools.get(name)
    if spec is None:
        return ToolError("unknown_tool", f"there is no tool named {name!r}")
    try:
        result = spec.function(world, **spec.admit(arguments))
    except ToolError as error:
        return error
    return _as_json(result)


class ToolCall(BaseModel):
    """One call of a tool by name, as in a gold action list."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    expect_error: bool = Field(
        default=False,
        description="True when the reference intends this call to fail (kept for the trace, "
        "changes nothing).",
    )


def replay(
    world: World, calls: list[ToolCall], tools: Mapping[str, ToolSpec] = SERVICE_TOOLS
) -> list[JsonValue | ToolError]:
    """Execute `calls` in order on `world` (mutating it); one outcome per call."""
    return [execute(world, call.name, call.arguments, tools) for call in calls]


def result_text(outcome: JsonValue | ToolError) -> str:
    """How a tool outcome reads to whoever called it: JSON, or ``Error: <message>``."""
    if isinstance(outcome, ToolError):
        return f"Error: {outcome.message}"
    if isinstance(outcome, str):
        return outcome
    return json.dumps(outcome)
