/// One field of an input that breaks a rule: its path (`weeklyWorkouts[0].days[1].day`) and what is wrong with it
/// (`must be 1 (Monday) to 7 (Sunday)`), the message reading as a sentence after the field's name.
public struct FieldError: Sendable, Equatable, Hashable {
    /// The path of the field at fault, as the input names it.
    public var field: String
    /// What the field must be, written to follow its name.
    public var message: String

    /// A broken rule of `field`.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// An input that breaks rules: every broken rule at once, in the order the fields are checked. The server answers it
/// as a `validation_failed` problem listing the same fields.
public struct InvalidFields: Error, Sendable, Equatable {
    /// The broken rules, never empty when thrown.
    public var errors: [FieldError]

    /// The failure of `errors`.
    public init(_ errors: [FieldError]) {
        self.errors = errors
    }
}
