"""The retail world: users, orders and products, with a canonical form and a state hash.

Incognita (the Incognita paper, section 3) keeps the source benchmark's success criterion: after
an episode the evaluator compares the final database with the one obtained by replaying
the gold actions (section 3.3). This module is that database. Its shape is the one of
tau-bench / tau2-bench retail data (users, orders and products keyed by id, payment
methods keyed by id, optional return / exchange / cancel fields on orders), so their data
files load unchanged (see `loaders`).

Decisions
- Canonical JSON is ``json.dumps`` of the three record maps (``orders``, ``products``,
  ``users``; every optional order field present, ``null`` when unset) with sorted keys
  and the default separators; the state hash is its sha256. That is the form in which
  tau2-bench hashes its database, so a hash here can be compared with an upstream hash
  of the same data. ``schema_version`` is file metadata and is not part of the state.
- Records inside a world are treated as values. ``World.fork`` is a cheap copy that
  shares the record objects; every write goes through ``order_for_write`` /
  ``user_for_write``, which first replace the record in *this* world by a private deep
  copy. So replaying many tasks from one initial world costs a dictionary copy per task,
  not a deep copy of the database. A world caches each record's canonical JSON (forks
  inherit the cache), so hashing a world that differs from its parent in a few records
  is cheap. Never mutate a record reached through a world's maps in place; take it with
  the ``*_for_write`` methods (replacing a record object outright is safe).
- Referential integrity (map keys equal record ids, orders belong to existing users and
  are listed by them, paid with the user's own payment methods, items exist in the
  catalogue) is validated when a world is built from data, so tools can rely on it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from confide.errors import ConfideError

SCHEMA_VERSION = 1

OrderStatus = Literal[
    "pending",
    "pending (item modified)",
    "processed",
    "delivered",
    "cancelled",
    "return requested",
    "exchange requested",
]
"""Order lifecycle stages, as in tau-bench retail data."""

CancelReason = Literal["no longer needed", "ordered by mistake"]
CANCEL_REASONS: tuple[CancelReason, ...] = get_args(CancelReason)


class WorldDataError(ConfideError):
    """A world or data file is malformed or inconsistent; the message names where."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Variant(_Model):
    """One purchasable item of a product type: its option values, stock and price."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Address(_Model):
    """A postal address (also the argument set of the two address-changing tools)."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class UserName(_Model):
    first_name: str
    last_name: str


class CreditCard(_Model):
    source: Literal["credit_card"] = "credit_card"
    id: str
    brand: str
    last_four: str


class PayPal(_Model):
    source: Literal["paypal"] = "paypal"
    id: str


class GiftCard(_Model):
    """A gift card; its balance is kept at two decimals by every tool that changes it."""

    source: Literal["gift_card"] = "gift_card"
    id: str
    balance: float


PaymentMethod = Annotated[CreditCard | PayPal | GiftCard, Field(discriminator="source")]


class OrderItem(_Model):
    """A line of an order: the variant bought and the price paid for it."""

    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class Fulfillment(_Model):
    tracking_id: list[str]
    item_ids: list[str]


class Payment(_Model):
    """One entry of an order's payment history."""

    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


class Product(_Model):
    """A product type and its variants keyed by item id."""

    name: str
    product_id: str
    variants: dict[str, Variant]


class User(_Model):
    """A customer profile."""

    user_id: str
    name: UserName
    address: Address
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class Order(_Model):
    """An order with its items, status, fulfilment and payment history."""

    order_id: str
    user_id: str
    address: Address
    items: list[OrderItem]
    status: OrderStatus
    fulfillments: list[Fulfillment]
    payment_history: list[Payment]
    cancel_reason: CancelReason | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


_SECTIONS: tuple[str, ...] = ("orders", "products", "users")
Record = User | Order | Product


def _empty_fragments() -> dict[str, dict[str, tuple[Record, str]]]:
    return {section: {} for section in _SECTIONS}


def record_json(record: Record) -> str:
    """Sorted-key JSON of one record, as it appears inside the canonical world JSON."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True)


class World(_Model):
    """The canonical database of one retail organization."""

    schema_version: int = SCHEMA_VERSION
    users: dict[str, User]
    orders: dict[str, Order]
    products: dict[str, Product]
    _fragments: dict[str, dict[str, tuple[Record, str]]] = PrivateAttr(
        default_factory=_empty_fragments
    )

    @model_validator(mode="after")
    def _check_integrity(self) -> World:
        problems = integrity_problems(self)
        if problems:
            shown = "; ".join(problems[:5])
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise ValueError(f"inconsistent world: {shown}{more}")
        return self

    # ----- copies and writes -------------------------------------------------------------

    def fork(self) -> World:
        """A cheap copy: new record maps sharing the (immutable-by-convention) records."""
        forked = World.model_construct(
            schema_version=self.schema_version,
            users=dict(self.users),
            orders=dict(self.orders),
            products=dict(self.products),
        )
        forked._fragments = {section: dict(cache) for section, cache in self._fragments.items()}
        return forked

    def order_for_write(self, order_id: str) -> Order:
        """Replace the order by a private copy in this world and return it for mutation."""
        order = self.orders[order_id].model_copy(deep=True)
        self.orders[order_id] = order
        return order

    def user_for_write(self, user_id: str) -> User:
        """Replace the user by a private copy in this world and return it for mutation."""
        user = self.users[user_id].model_copy(deep=True)
        self.users[user_id] = user
        return user

    # ----- canonical form ----------------------------------------------------------------

    def _canonical_chunks(self) -> Iterator[str]:
        """The canonical JSON in pieces, from per-record fragments cached in this world.

        A fragment is reused only while the map still holds the very record object it was
        made from.
        """
        yield "{"
        for index, section in enumerate(_SECTIONS):
            records: dict[str, Record] = getattr(self, section)
            cache = self._fragments[section]
            yield f"{', ' if index else ''}{json.dumps(section)}: {{"
            for position, key in enumerate(sorted(records)):
                record = records[key]
                cached = cache.get(key)
                if cached is None or cached[0] is not record:
                    cached = (record, f"{json.dumps(key)}: {record_json(record)}")
                    cache[key] = cached
                yield f", {cached[1]}" if position else cached[1]
            yield "}"
        yield "}"

    def canonical_json(self) -> str:
        """``json.dumps({"orders":..., "products":..., "users":...}, sort_keys=True)``."""
        return "".join(self._canonical_chunks())

    def state_hash(self) -> str:
        """sha256 (hex) of the canonical JSON: equal hashes mean equal database states."""
        digest = hashlib.sha256()
        for chunk in self._canonical_chunks():
            digest.update(chunk.encode())
        return digest.hexdigest()

    def state_dict(self) -> dict[str, Any]:
        """The state as plain JSON data (the three record maps, no schema version)."""
        return self.model_dump(mode="json", include=set(_SECTIONS))


def integrity_problems(world: World) -> list[str]:
    """Every referential-integrity violation in `world`, as readable strings."""
    problems: list[str] = []
    for key, product in world.products.items():
        if product.product_id != key:
            problems.append(f"products[{key!r}].product_id is {product.product_id!r}")
        for item_key, variant in product.variants.items():
            if variant.item_id != item_key:
                problems.append(
                    f"products[{key!r}].variants[{item_key!r}].item_id is {variant.item_id!r}"
                )
    for key, user in world.users.items():
        if user.user_id != key:
            problems.append(f"users[{key!r}].user_id is {user.user_id!r}")
        for pm_key, method in user.payment_methods.items():
            if method.id != pm_key:
                problems.append(f"users[{key!r}].payment_methods[{pm_key!r}].id is {method.id!r}")
        for order_id in user.orders:
            if order_id not in world.orders:
                problems.append(f"users[{key!r}].orders lists unknown order {order_id!r}")
    for key, order in world.orders.items():
        where = f"orders[{key!r}]"
        if order.order_id != key:
            problems.append(f"{where}.order_id is {order.order_id!r}")
        owner = world.users.get(order.user_id)
        if owner is None:
            problems.append(f"{where}.user_id {order.user_id!r} is not a user")
            continue
        if not order.payment_history:
            problems.append(f"{where}.payment_history is empty")
        if key not in owner.orders:
            problems.append(f"{where} is not listed in users[{order.user_id!r}].orders")
        for i, payment in enumerate(order.payment_history):
            if payment.payment_method_id not in owner.payment_methods:
                problems.append(
                    f"{where}.payment_history[{i}].payment_method_id "
                    f"{payment.payment_method_id!r} is not a payment method of its user"
                )
        for i, item in enumerate(order.items):
            listed = world.products.get(item.product_id)
            if listed is None or item.item_id not in listed.variants:
                problems.append(
                    f"{where}.items[{i}] ({item.product_id!r}, {item.item_id!r}) "
                    "is not in the catalogue"
                )
    return problems
