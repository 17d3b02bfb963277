import FitBaseCore
import HTTPTypes

/// A write named an id that is another user's record (or registration): nothing was written. Stores throw it without
/// speaking HTTP; the client sees 409 `id_taken` naming the field.
struct RecordIDTaken: Error, ProblemConvertible {
    /// The field holding the id, as the client sent it.
    var field = "id"
    var detail = "This id is in use by a record you cannot change; create the record under a new id."
    var message = "is in use"

    var problem: Problem { Problem(.conflict, code: .idTaken, detail: detail, fieldErrors: [.init(field: field, message: message)]) }
}
