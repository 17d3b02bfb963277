import SQLKit

/// A savepoint inside the caller's transaction: a write that may fail on a constraint runs inside one, and rolling back
/// to it undoes that write alone, leaving the transaction usable. Names are fixed identifiers, never user input.
enum Savepoint {
    static func begin(_ name: StaticString, on db: any SQLDatabase) async throws {
        try await db.raw("SAVEPOINT \(unsafeRaw: name.description)").run()
    }

    static func release(_ name: StaticString, on db: any SQLDatabase) async throws {
        try await db.raw("RELEASE SAVEPOINT \(unsafeRaw: name.description)").run()
    }

    /// Undoes what was written since ``begin(_:on:)`` and ends the savepoint.
    static func rollBack(_ name: StaticString, on db: any SQLDatabase) async throws {
        try await db.raw("ROLLBACK TO SAVEPOINT \(unsafeRaw: name.description)").run()
        try await db.raw("RELEASE SAVEPOINT \(unsafeRaw: name.description)").run()
    }
}
