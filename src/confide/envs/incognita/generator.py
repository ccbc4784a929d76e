"""A deterministic generator of retail worlds of any size, with our own vocabulary.

Incognita's tasks run against one canonical database (the Incognita paper, section 3.3). We ship
our own world rather than the source benchmark's data, so this module builds a realistic
one from a seed: customers with names, addresses, emails and payment methods (credit
cards, PayPal, gift cards with balances); a catalogue of product types whose variants
combine option values and carry their own price and availability; and orders in every
status, consistent with what the tools would have done.

Decisions
- One `random.Random(seed)` drives every choice, consumed in a fixed order; nothing
  iterates a set. Same seed and spec -> identical world and `state_hash`.
- Orders are first placed as pending, processed or delivered (paid in full with one of
  the customer's methods; fulfilment records for shipped ones). The other statuses are
  reached by running the real tools on those orders: ``cancelled`` by
  `cancel_pending_order`, ``pending (item modified)`` by `modify_pending_order_items`,
  ``return requested`` / ``exchange requested`` by the delivered-order tools. So derived
  orders have exactly the payment history, sorted item lists and gift-card balances the
  tools produce. Status counts follow `WorldSpec.status_shares` by largest remainder, and
  every status occurs once there are at least as many orders as statuses.
- Items in past orders may now be out of stock; every product keeps at least two
  available variants so that a modification or exchange is always possible.
- Product types are limited to the vocabulary below (`MAX_PRODUCT_TYPES`); customers and
  orders are unlimited.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from confide.envs.incognita.tools import (
    ToolError,
    cancel_pending_order,
    exchange_delivered_order_items,
    modify_pending_order_items,
    return_delivered_order_items,
)
from confide.envs.incognita.world import (
    CANCEL_REASONS,
    Address,
    CreditCard,
    GiftCard,
    Order,
    OrderStatus,
    PaymentMethod,
    PayPal,
    Product,
    User,
    UserName,
    Variant,
    World,
)

# ----- vocabulary (ours) --------------------------------------------------------------------
# fmt: off

FIRST_NAMES: tuple[str, ...] = (
    "Adaeze", "Aiko", "Alejandro", "Amara", "Anders", "Anika", "Arjun", "Astrid", "Beatriz",
    "Bilal", "Bronwyn", "Caleb", "Camila", "Chidi", "Dalia", "Dmitri", "Eamon", "Elif",
    "Emeka", "Esperanza", "Farah", "Felipe", "Freya", "Gideon", "Hana", "Hamza", "Imani",
    "Ingrid", "Isandro", "Jonas", "Kalani", "Kavya", "Keiko", "Kwame", "Leilani", "Lorenzo",
    "Lucia", "Magnus", "Malik", "Marisol", "Mateo", "Mei", "Mirela", "Nadia", "Naveen",
    "Niamh", "Obinna", "Odette", "Oren", "Priya", "Quentin", "Rafael", "Rania", "Rhys",
    "Rosalind", "Saoirse", "Sebastian", "Selin", "Soren", "Tamsin", "Tariq", "Thandiwe",
    "Tobias", "Ulla", "Valentina", "Vikram", "Wren", "Xiomara", "Yara", "Yusra", "Zainab",
    "Zoltan", "Bea", "Cormac", "Delphine", "Ezra", "Greta", "Hollis", "Ines", "Jasper",
)

LAST_NAMES: tuple[str, ...] = (
    "Abernathy", "Achebe", "Almeida", "Andersen", "Bakshi", "Balogun", "Barros", "Bellweather",
    "Brannigan", "Castellanos", "Chaudhry", "Cortez", "Dahl", "Delacroix", "Dimitriou",
    "Ekwueme", "Engstrom", "Espinoza", "Fairbanks", "Farouk", "Fitzgerald", "Gallagher",
    "Greenberg", "Haddad", "Halvorsen", "Hashimoto", "Iwasaki", "Jablonski", "Kapoor",
    "Kowalczyk", "Lindqvist", "Lombardi", "Mackenzie", "Maldonado", "Marchetti", "Mbeki",
    "Nakagawa", "Novak", "Oduya", "Okonkwo", "Ostrowski", "Pellegrino", "Quispe", "Ramaswamy",
    "Rasmussen", "Rinaldi", "Sandoval", "Schreiber", "Sokolova", "Strand", "Takahashi",
    "Thorne", "Trujillo", "Underwood", "Valdivia", "Varga", "Whitlock", "Yamamoto", "Zeller",
    "Zielinski", "Ashdown", "Calloway", "Drummond", "Everly", "Galloway", "Holloway",
    "Kincaid", "Lachance", "Moreau", "Nwosu", "Oyelaran", "Prendergast", "Rosales",
)

STREET_NAMES: tuple[str, ...] = (
    "Alder", "Birchwood", "Bluebonnet", "Cedar Ridge", "Chestnut", "Clover", "Cobblestone",
    "Copperfield", "Driftwood", "Elmhurst", "Fernbrook", "Foxglove", "Glenview", "Harbor",
    "Hawthorn", "Heron", "Juniper", "Kestrel", "Lakeshore", "Larkspur", "Linden", "Magnolia",
    "Meadowlark", "Millstone", "Orchard", "Osprey", "Pinecrest", "Quarry", "Ravenwood",
    "Riverbend", "Rosemary", "Saddleback", "Sagebrush", "Sparrow", "Stonebridge", "Sycamore",
    "Thistle", "Tidewater", "Willow Creek", "Wintergreen",
)

STREET_SUFFIXES: tuple[str, ...] = (
    "Street", "Avenue", "Road", "Lane", "Drive", "Court", "Way", "Place", "Boulevard", "Terrace",
)

CITIES: tuple[tuple[str, str, str], ...] = (
    ("Tacoma", "WA", "984"), ("Spokane", "WA", "992"), ("Boise", "ID", "837"),
    ("Albuquerque", "NM", "871"), ("Tucson", "AZ", "857"), ("Omaha", "NE", "681"),
    ("Madison", "WI", "537"), ("Milwaukee", "WI", "532"), ("Minneapolis", "MN", "554"),
    ("Des Moines", "IA", "503"), ("Kansas City", "MO", "641"), ("St. Louis", "MO", "631"),
    ("Louisville", "KY", "402"), ("Nashville", "TN", "372"), ("Memphis", "TN", "381"),
    ("Birmingham", "AL", "352"), ("Atlanta", "GA", "303"), ("Savannah", "GA", "314"),
    ("Raleigh", "NC", "276"), ("Richmond", "VA", "232"), ("Baltimore", "MD", "212"),
    ("Pittsburgh", "PA", "152"), ("Buffalo", "NY", "142"), ("Rochester", "NY", "146"),
    ("Hartford", "CT", "061"), ("Providence", "RI", "029"), ("Portland", "ME", "041"),
    ("Burlington", "VT", "054"), ("Cleveland", "OH", "441"), ("Detroit", "MI", "482"),
    ("Grand Rapids", "MI", "495"), ("Tulsa", "OK", "741"), ("Little Rock", "AR", "722"),
    ("New Orleans", "LA", "701"), ("Salt Lake City", "UT", "841"), ("Reno", "NV", "895"),
    ("Sacramento", "CA", "958"), ("Fresno", "CA", "937"), ("Portland", "OR", "972"),
    ("Eugene", "OR", "974"), ("Anchorage", "AK", "995"), ("Honolulu", "HI", "968"),
)

CARD_BRANDS: tuple[str, ...] = ("visa", "mastercard", "amex", "discover")


class ProductType(BaseModel):
    """A catalogue entry: name, option dimensions with their values, and a base price."""

    model_config = ConfigDict(frozen=True)

    name: str
    options: tuple[tuple[str, tuple[str, ...]], ...]
    base_price: float


def _pt(name: str, base_price: float, **options: Sequence[str]) -> ProductType:
    return ProductType(
        name=name,
        options=tuple((key.replace("_", " "), tuple(values)) for key, values in options.items()),
        base_price=base_price,
    )


CATALOGUE: tuple[ProductType, ...] = (
    _pt("Rain Jacket", 89, size=["XS", "S", "M", "L", "XL"],
        color=["navy", "olive", "mustard", "charcoal"], hood=["packable", "fixed"]),
    _pt("Trail Runners", 120, size=["7", "8", "9", "10", "11", "12"],
        width=["regular", "wide"], color=["slate", "orange", "forest"]),
    _pt("Burr Coffee Grinder", 145, finish=["brushed steel", "matte black", "cream"],
        burr=["conical", "flat"], hopper=["small", "large"]),
    _pt("Cast Iron Skillet", 38, diameter=["8 inch", "10 inch", "12 inch"],
        coating=["seasoned", "enameled"]),
    _pt("Foam Roller", 29, density=["soft", "medium", "firm"],
        length=["12 inch", "18 inch", "36 inch"], surface=["smooth", "textured"]),
    _pt("Soundbar", 210, channels=["2.0", "2.1", "5.1"], color=["black", "white"],
        connectivity=["HDMI", "optical", "wireless"]),
    _pt("Water Flosser", 55, color=["white", "black", "rose"],
        reservoir=["countertop", "cordless"], tips=["3 tips", "6 tips"]),
    _pt("Standing Desk", 380, width=["48 inch", "60 inch", "72 inch"],
        top=["bamboo", "walnut", "white laminate"], motor=["single", "dual"]),
    _pt("Table Lamp", 60, shade=["linen", "glass", "metal"],
        base_color=["brass", "black", "white"], bulb=["LED", "incandescent"]),
    _pt("Chef's Knife", 85, blade_length=["6 inch", "8 inch", "10 inch"],
        steel=["German", "Japanese", "Damascus"], handle=["wood", "composite"]),
    _pt("Over-Ear Headset", 180, color=["black", "silver", "midnight blue"],
        noise_cancelling=["yes", "no"], connectivity=["wireless", "wired"]),
    _pt("Fitness Tracker", 130, band=["silicone", "fabric", "steel mesh"],
        display=["monochrome", "color"], color=["graphite", "lavender", "sand"]),
    _pt("Dehumidifier", 190, capacity=["22 pint", "35 pint", "50 pint"],
        drain=["bucket", "pump"], color=["white", "gray"]),
    _pt("Camping Tent", 170, capacity=["2-person", "4-person", "6-person"],
        season=["3-season", "4-season"], color=["green", "orange"]),
    _pt("Sleeping Bag", 110, temperature_rating=["20F", "35F", "50F"],
        fill=["down", "synthetic"], length=["regular", "long"]),
    _pt("Robot Mop", 300, navigation=["lidar", "camera", "gyroscope"],
        dock=["self-cleaning", "standard"], color=["black", "white"]),
    _pt("Stand Mixer", 260, capacity=["4.5 quart", "5.5 quart", "7 quart"],
        color=["red", "pistachio", "stainless"]),
    _pt("Slow Cooker", 48, capacity=["4 quart", "6 quart", "8 quart"],
        control=["manual", "programmable"], finish=["black", "stainless"]),
    _pt("Computer Monitor", 230, size=["24 inch", "27 inch", "32 inch"],
        resolution=["1080p", "1440p", "4K"], panel=["IPS", "VA"]),
    _pt("Trackball", 45, color=["graphite", "white"],
        hand=["ambidextrous", "right-handed"], connection=["USB receiver", "Bluetooth"]),
    _pt("Drawing Tablet", 140, active_area=["small", "medium", "large"],
        pen=["standard", "tilt-sensitive"], connectivity=["USB", "Bluetooth"]),
    _pt("Instant Camera", 95, color=["mint", "lilac", "black"],
        film_format=["mini", "square", "wide"]),
    _pt("Ski Goggles", 110, lens=["mirrored", "clear", "photochromic"],
        frame=["small", "medium", "large"], color=["white", "black", "coral"]),
    _pt("Daypack", 75, capacity=["18L", "24L", "30L"], color=["rust", "teal", "black"],
        frame=["frameless", "internal"]),
    _pt("Throw Blanket", 48, material=["wool", "cotton", "fleece"],
        size=["50x60 inch", "60x80 inch"], color=["oatmeal", "sage", "rust"]),
    _pt("Ceramic Planter", 30, diameter=["6 inch", "10 inch", "14 inch"],
        glaze=["speckled white", "terracotta", "deep blue"], drainage=["with hole", "sealed"]),
    _pt("Kettlebell", 55, weight=["8 kg", "12 kg", "16 kg", "24 kg"],
        finish=["cast iron", "vinyl coated", "competition"]),
    _pt("Solar Lantern", 40, brightness=["200 lumen", "400 lumen", "800 lumen"],
        charging=["solar only", "solar and USB"], color=["black", "yellow"]),
    _pt("Rice Cooker", 90, capacity=["3 cup", "5 cup", "10 cup"],
        function=["basic", "multi-cook"], color=["white", "black"]),
    _pt("Winter Gloves", 32, size=["S", "M", "L", "XL"], lining=["fleece", "wool"],
        touchscreen=["yes", "no"]),
    _pt("Pour-Over Set", 42, material=["glass", "ceramic", "copper"],
        size=["1-2 cups", "3-4 cups"]),
    _pt("Bike Lock", 50, type=["U-lock", "chain", "folding"],
        security_rating=["standard", "high"], key=["keyed", "combination"]),
)
# fmt: on
MAX_PRODUCT_TYPES = len(CATALOGUE)

STATUSES: tuple[OrderStatus, ...] = get_args(OrderStatus)
"""Every order status, in lifecycle order."""


class WorldSpec(BaseModel):
    """How big a world to build and how its orders are spread over statuses."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_users: int = Field(default=60, ge=1)
    n_product_types: int = Field(default=24, ge=1, le=MAX_PRODUCT_TYPES)
    orders_per_user: tuple[float, ...] = Field(
        default=(0.08, 0.27, 0.3, 0.2, 0.1, 0.05),
        description="Probability of a customer having 0, 1, 2, ... orders.",
    )
    status_shares: dict[OrderStatus, float] = Field(
        default={
            "pending": 0.27,
            "pending (item modified)": 0.06,
            "processed": 0.12,
            "delivered": 0.31,
            "cancelled": 0.1,
            "return requested": 0.07,
            "exchange requested": 0.07,
        }
    )

    @field_validator("orders_per_user")
    @classmethod
    def _positive_weights(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if not value or min(value) < 0 or sum(value) <= 0:
            raise ValueError(f"orders_per_user must be non-negative weights, got {value}")
        return value

    @field_validator("status_shares")
    @classmethod
    def _shares(cls, value: dict[OrderStatus, float]) -> dict[OrderStatus, float]:
        if min(value.values(), default=-1) < 0 or sum(value.values()) <= 0:
            raise ValueError(f"status_shares must be non-negative weights, got {value}")
        return value


class _Ids:
    """Unique random digit strings, per family."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def digits(self, n: int) -> str:
        while True:
            candidate = str(self._rng.randrange(10 ** (n - 1), 10**n))
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate


def _allocate(total: int, shares: dict[OrderStatus, float]) -> list[OrderStatus]:
    """`total` statuses in proportion to `shares` (largest remainder, each >= 1 if room)."""
    weight = sum(shares.values())
    present = [status for status in STATUSES if shares.get(status, 0) > 0]
    exact = {status: total * shares[status] / weight for status in present}
    counts = {status: int(exact[status]) for status in present}
    if total >= len(present):
        counts = {status: max(count, 1) for status, count in counts.items()}
    while sum(counts.values()) > total:
        spare = [status for status in present if counts[status] > 1]
        counts[max(spare, key=lambda s: counts[s] - exact[s])] -= 1
    while sum(counts.values()) < total:
        counts[min(present, key=lambda s: counts[s] - exact[s])] += 1
    return [status for status in present for _ in range(counts[status])]


def _catalogue(rng: random.Random, ids: _Ids, n_types: int) -> dict[str, Product]:
    products: dict[str, Product] = {}
    for kind in rng.sample(CATALOGUE, n_types):
        factors = {
            (key, value): 1.0 if index == 0 else 1.0 + rng.uniform(-0.12, 0.35)
            for key, values in kind.options
            for index, value in enumerate(values)
        }
        combos = list(itertools.product(*[[(k, v) for v in vs] for k, vs in kind.options]))
        chosen = rng.sample(combos, min(len(combos), rng.randint(4, 14)))
        available = [rng.random() < 0.68 for _ in chosen]
        for index in rng.sample(range(len(chosen)), 2):
            available[index] = True
        variants: dict[str, Variant] = {}
        for combo, in_stock in zip(chosen, available, strict=True):
            price = kind.base_price * rng.uniform(0.93, 1.07)
            for pair in combo:
                price *= factors[pair]
            item_id = ids.digits(10)
            variants[item_id] = Variant(
                item_id=item_id, options=dict(combo), available=in_stock, price=round(price, 2)
            )
        product_id = ids.digits(10)
        products[product_id] = Product(name=kind.name, product_id=product_id, variants=variants)
    return products


def _address(rng: random.Random) -> Address:
    city, state, prefix = rng.choice(CITIES)
    unit = rng.choice(
        [
            "",
            "",
            "",
            f"Apt {rng.randint(1, 40)}",
            f"Unit {rng.randint(100, 999)}",
            f"Suite {rng.randint(100, 999)}",
            f"Floor {rng.randint(2, 12)}",
        ]
    )
    street = f"{rng.randint(10, 9999)} {rng.choice(STREET_NAMES)} {rng.choice(STREET_SUFFIXES)}"
    return Address(
        address1=street,
        address2=unit,
        city=city,
        state=state,
        country="USA",
        zip=f"{prefix}{rng.randint(0, 99):02d}",
    )


def _payment_methods(rng: random.Random, ids: _Ids) -> dict[str, PaymentMethod]:
    methods: dict[str, PaymentMethod] = {}
    count = rng.choices([1, 2, 3], weights=[55, 33, 12])[0]
    sources = rng.sample(["credit_card", "credit_card", "gift_card", "gift_card", "paypal"], count)
    for source in sources:
        method_id = f"{source}_{ids.digits(7)}"
        if source == "credit_card":
            brand = rng.choices(CARD_BRANDS, weights=[45, 35, 12, 8])[0]
            last_four = f"{rng.randint(0, 9999):04d}"
            methods[method_id] = CreditCard(id=method_id, brand=brand, last_four=last_four)
        elif source == "gift_card":
            whole = rng.random() < 0.3
            balance = float(rng.randint(0, 250)) if whole else round(rng.uniform(0, 300), 2)
            methods[method_id] = GiftCard(id=method_id, balance=balance)
        else:
            methods[method_id] = PayPal(id=method_id)
    return methods


def _users(rng: random.Random, ids: _Ids, n_users: int) -> dict[str, User]:
    users: dict[str, User] = {}
    taken: set[str] = set()
    while len(users) < n_users:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        address = _address(rng)
        number = str(rng.randint(1000, 9999))
        user_id = f"{first}_{last}_{number}".lower().replace("'", "")
        local = rng.choice((f"{first}.{last}", f"{first}{last}", f"{first[0]}{last}"))
        email = f"{local.lower()}{number}@example.com"
        name_zip = f"{first}|{last}|{address.zip}"
        if {user_id, email, name_zip} & taken:
            continue
        taken.update((user_id, email, name_zip))
        users[user_id] = User(
            user_id=user_id,
            name=UserName(first_name=first, last_name=last),
            address=address,
            email=email,
            payment_methods=_payment_methods(rng, ids),
            orders=[],
        )
    return users


def _place_orders(
    rng: random.Random,
    ids: _Ids,
    spec: WorldSpec,
    users: dict[str, User],
    products: dict[str, Product],
) -> tuple[dict[str, Order], list[OrderStatus]]:
    """Orders as pending / processed / delivered, plus the status each should end in."""
    counts = [rng.choices(range(len(spec.orders_per_user)), spec.orders_per_user)[0] for _ in users]
    targets = _allocate(sum(counts), spec.status_shares)
    rng.shuffle(targets)
    product_list = list(products.values())
    orders: dict[str, Order] = {}
    target_iter = iter(targets)
    for user, count in zip(users.values(), counts, strict=True):
        for _ in range(count):
            target = next(target_iter)
            order_id = f"#W{ids.digits(7)}"
            lines: list[dict[str, Any]] = []
            for _ in range(rng.choices([1, 2, 3, 4, 5], weights=[24, 26, 22, 16, 12])[0]):
                product = rng.choice(product_list)
                variant = rng.choice(list(product.variants.values()))
                lines.append(
                    {
                        "name": product.name,
                        "product_id": product.product_id,
                        "item_id": variant.item_id,
                        "price": variant.price,
                        "options": dict(variant.options),
                    }
                )
            if len(lines) > 1 and rng.random() < 0.05:
                lines[-1] = dict(lines[0])
            placed = {
                "cancelled": "pending",
                "pending (item modified)": "pending",
                "return requested": "delivered",
                "exchange requested": "delivered",
            }
            status = placed.get(target, target)
            shipped = status != "pending"
            fulfillments = (
                [{"tracking_id": [ids.digits(12)], "item_ids": [line["item_id"] for line in lines]}]
                if shipped
                else []
            )
            address = user.address if rng.random() < 0.85 else _address(rng)
            method_id = rng.choice(list(user.payment_methods))
            total = round(sum(line["price"] for line in lines), 2)
            orders[order_id] = Order.model_validate(
                {
                    "order_id": order_id,
                    "user_id": user.user_id,
                    "address": address.model_dump(),
                    "items": lines,
                    "status": status,
                    "fulfillments": fulfillments,
                    "payment_history": [
                        {
                            "transaction_type": "payment",
                            "amount": total,
                            "payment_method_id": method_id,
                        }
                    ],
                }
            )
            user.orders.append(order_id)
    return orders, targets


def _replacement_plan(
    rng: random.Random, world: World, order: Order
) -> tuple[list[str], list[str]]:
    lines = rng.sample(order.items, rng.choice([1, 1, 2]) if len(order.items) > 1 else 1)
    old_ids, new_ids = [], []
    for line in lines:
        product = world.products[line.product_id]
        options = [
            v.item_id
            for v in product.variants.values()
            if v.available and v.item_id != line.item_id
        ]
        if line.item_id in old_ids or not options:
            continue
        old_ids.append(line.item_id)
        new_ids.append(rng.choice(options))
    return old_ids, new_ids


def _advance(rng: random.Random, world: World, order_id: str, target: OrderStatus) -> None:
    """Bring a placed order to its target status with the real tools (or leave it)."""
    order = world.orders[order_id]
    if target == "cancelled":
        cancel_pending_order(world, order_id, rng.choice(CANCEL_REASONS))
    elif target == "return requested":
        items = rng.sample([line.item_id for line in order.items], rng.randint(1, len(order.items)))
        methods = world.users[order.user_id].payment_methods
        gift_cards = sorted(m for m in methods if isinstance(methods[m], GiftCard))
        refund_to = order.payment_history[0].payment_method_id
        if gift_cards and rng.random() < 0.3:
            refund_to = rng.choice(gift_cards)
        return_delivered_order_items(world, order_id, items, refund_to)
    else:
        old, new = _replacement_plan(rng, world, order)
        tool = (
            exchange_delivered_order_items
            if target == "exchange requested"
            else modify_pending_order_items
        )
        original = order.payment_history[0].payment_method_id
        others = sorted(m for m in world.users[order.user_id].payment_methods if m != original)
        for method_id in [original, *others] if old else []:
            try:
                tool(world, order_id, old, new, method_id)
                return
            except ToolError as error:
                if error.code != "insufficient_gift_card_balance":
                    raise


def generate_world(seed: int, spec: WorldSpec | None = None) -> World:
    """Build a world from `seed` (same seed and spec -> same world, same hash)."""
    spec = spec or WorldSpec()
    rng = random.Random(seed)
    ids = _Ids(rng)
    products = _catalogue(rng, ids, spec.n_product_types)
    users = _users(rng, ids, spec.n_users)
    orders, targets = _place_orders(rng, ids, spec, users, products)
    world = World(users=users, orders=orders, products=products)
    for order_id, target in zip(list(orders), targets, strict=True):
        if world.orders[order_id].status != target:
            _advance(rng, world, order_id, target)
    return World.model_validate(world.model_dump())
