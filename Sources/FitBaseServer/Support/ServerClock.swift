import FitBaseCore
import Foundation

/// Where the server reads the time. `buildApplication` is given one — the system's unless a test hands in one it
/// moves — and the operations, the authentication middleware and the background services read "now" from it.
package struct ServerClock: Sendable {
    private let instant: @Sendable () -> Date

    /// A clock reading `instant` (tests: a time they set and advance).
    package init(_ instant: @escaping @Sendable () -> Date) {
        self.instant = instant
    }

    /// The system's clock.
    package static let system = ServerClock { Date.now }

    /// The current instant at the precision both engines store (microseconds): anything written to the database takes
    /// its time from here, so a value read back compares equal to the value written — list cursors depend on it.
    package var now: Date {
        Date(timeIntervalSinceReferenceDate: (instant().timeIntervalSinceReferenceDate * 1e6).rounded() / 1e6)
    }
}

/// Where the server takes the ids of the records it creates: random by default, a sequence a test can predict when
/// one is handed to `buildApplication`.
package struct IDSource: Sendable {
    private let next: @Sendable () -> UUID

    package init(_ next: @escaping @Sendable () -> UUID) {
        self.next = next
    }

    /// Random version-4 UUIDs.
    package static let random = IDSource { UUID() }

    /// A new id for a record of any type.
    package func make<Entity>() -> Identifier<Entity> {
        Identifier(rawValue: next())
    }
}

/// What every feature's operations read besides their feature: the clock and the id source the application was built
/// with (``ServerOperations`` holds them).
protocol FeatureOperations: Sendable {
    var clock: ServerClock { get }
    var ids: IDSource { get }
    /// This application's metrics (see ``ServerMetrics``).
    var metrics: ServerMetrics { get }
}
