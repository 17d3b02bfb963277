import FitBaseCore
import Synchronization

/// Live sessions this instance has verified, with their account's role, kept under the `sessions` generation (see
/// ``CacheGenerations``): every revocation, sign-out, reuse detection, account deletion and role change bumps it, so
/// an entry is never used after such a change has committed. Only live sessions are kept; an unknown or revoked
/// session is asked of the database every time.
final class SessionCache: Sendable {
    private struct Entry {
        var user: UserID
        var role: Role
    }

    /// Entries kept at most; past it the cache starts over (a flood of fresh sessions cannot grow it without bound).
    static let capacity = 50_000

    private let state = Mutex<(generation: Int64, entries: [SessionID: Entry])>((-1, [:]))

    /// The cached role of `session` of `user` at `generation`, if it was live then.
    func role(of session: SessionID, user: UserID, at generation: Int64) -> Role? {
        state.withLock { state in
            guard state.generation == generation, let entry = state.entries[session], entry.user == user else { return nil }
            return entry.role
        }
    }

    /// Keeps `session` as live at `generation` (read before the row was); a newer generation drops what was kept.
    func keep(_ session: SessionID, user: UserID, role: Role, at generation: Int64) {
        state.withLock { state in
            if generation > state.generation {
                state = (generation, [:])
            } else if generation < state.generation {
                return
            }
            if state.entries.count >= Self.capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[session] = Entry(user: user, role: role)
        }
    }
}
