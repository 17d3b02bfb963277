import FitBaseCore
import HTTPTypes
import SQLKit

/// How many health samples each account keeps, counted in the transaction of every write and delete
/// (`health_sample_counts`), so an account cannot grow without bound: an upload that would pass the quota is refused
/// whole with 409 `quota_exceeded`, on every instance alike.
enum HealthSampleQuota {
    /// `FITBASE_HEALTH_SAMPLE_QUOTA`'s default: 2 million samples, a heart-rate sample a minute round the clock for
    /// almost four years.
    static let defaultLimit = 2_000_000

    /// Adds `delta` to `user`'s count; throws 409 `quota_exceeded` when the count passes `limit` (the caller's
    /// transaction then stores nothing).
    static func count(_ delta: Int, of user: UserID, limit: Int, on db: any SQLDatabase) async throws {
        guard delta != 0 else { return }
        let row = try await db.raw("""
            INSERT INTO health_sample_counts (user_id, count) VALUES (\(bind: user.rawValue), \(bind: max(delta, 0)))
            ON CONFLICT (user_id) DO UPDATE SET count = health_sample_counts.count + \(bind: delta)
            RETURNING count
            """).first()
        guard let count = try row?.decode(column: "count", as: Int.self), count > limit else { return }
        throw Problem(
            .conflict, code: .quotaExceeded,
            detail: "The account keeps at most \(limit) health samples and has \(count - delta); delete some before uploading more."
        )
    }

    /// Forgets `user`'s count (their samples are gone).
    static func delete(of user: UserID, on db: any SQLDatabase) async throws {
        try await db.delete(from: "health_sample_counts").where("user_id", .equal, user.rawValue).run()
    }
}
