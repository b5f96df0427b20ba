/// An upcaster written as data: what each output event is and where each of its fields comes
/// from. ``Upcaster/init(type:from:name:plan:)`` derives the lift (and what it produces) from it,
/// and because a plan can be read, a replay can also compile it into a lift straight from the
/// stored bytes: one declaration, two ways to run it, the same result.
///
/// ```swift
/// UpcastPlan([
///     .init("Retitled", version: 1, fields: [.init("title", from: "title", default: .string(""))]),
///     .init("BodyEdited", version: 1, fields: [.init("body", from: "content", default: .string(""))]),
/// ])
/// ```
public struct UpcastPlan: Sendable, Equatable {
    /// Where an output field's value comes from.
    public enum Source: Sendable, Equatable {
        /// The old event's field of this name, or `default` when the old event lacks it.
        case field(String, default: FieldValue)
        /// Always this value.
        case constant(FieldValue)
    }

    /// One field of an output event.
    public struct FieldMapping: Sendable, Equatable {
        public var name: String
        public var source: Source

        public init(_ name: String, from field: String, default value: FieldValue) {
            self.name = name
            source = .field(field, default: value)
        }

        public init(_ name: String, constant value: FieldValue) {
            self.name = name
            source = .constant(value)
        }
    }

    /// When an output is produced: always, or only when an old field has (or has not) a value.
    public enum Condition: Sendable, Equatable {
        case always
        case when(String, equals: FieldValue)
        case unless(String, equals: FieldValue)

        /// Whether `fields` meet the condition.
        public func holds(for fields: EventFields) -> Bool {
            switch self {
            case .always: return true
            case .when(let name, let value): return fields[name] == value
            case .unless(let name, let value): return fields[name] != value
            }
        }
    }

    /// One event the old one becomes.
    public struct Output: Sendable, Equatable {
        public var type: String
        public var version: UInt32
        public var fields: [FieldMapping]
        public var condition: Condition

        public init(_ type: String, version: UInt32, fields: [FieldMapping] = [], when condition: Condition = .always) {
            self.type = type
            self.version = version
            self.fields = fields
            self.condition = condition
        }

        public var key: SchemaKey { SchemaKey(type, version) }
    }

    /// The events the old one becomes, in order (those whose condition holds); none retires it.
    public var outputs: [Output]

    public init(_ outputs: [Output]) { self.outputs = outputs }

    /// Runs the plan on decoded fields.
    public func lift(_ old: RawEvent) -> [RawEvent] {
        outputs.filter { $0.condition.holds(for: old.fields) }.map { out in
            var fields = EventFields()
            for m in out.fields {
                switch m.source {
                case .field(let name, let value): fields[m.name] = old.fields[name] ?? value
                case .constant(let value): fields[m.name] = value
                }
            }
            return RawEvent(type: out.type, version: out.version, fields: fields)
        }
    }
}

extension Upcaster {
    /// An upcaster declared by its plan: the lift runs the plan, and what it produces is every
    /// output the plan names.
    public init(type: String, from version: UInt32, name: String, plan: UpcastPlan) {
        self.init(
            type: type, from: version, name: name, produces: plan.outputs.map(\.key),
            lift: { old in plan.lift(old) })
        self.plan = plan
    }
}
