import FitBaseCore
import HTTPTypes
import HummingbirdBcrypt
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Hashes and checks passwords with bcrypt on its own threads, so a burst of sign-ins never blocks request handling
/// or the database's blocking pool.
///
/// Admission is bounded: at most `slots` hashes run or wait at once (by default two per core). A request that finds
/// every slot taken is refused at once with 503 `busy` and `Retry-After`, so a flood of sign-ins on made-up
/// addresses costs the flooder a refusal instead of giving everyone unbounded latency.
final class PasswordHasher: Service {
    let cost: UInt8
    let slots: Int
    private let threads: NIOThreadPool
    private let inFlight = Mutex(0)
    /// A hash of a random password at `cost`, checked when the e-mail is unknown so both answers take as long.
    private let decoy = Mutex<String?>(nil)

    init(cost: UInt8, threadCount: Int = System.coreCount, slots: Int? = nil) {
        self.cost = cost
        self.slots = max(1, slots ?? 2 * max(1, threadCount))
        self.threads = NIOThreadPool(numberOfThreads: max(1, threadCount))
        threads.start()
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await admitted { try await self.threads.runIfActive { Bcrypt.hash(password, cost: cost) } }
    }

    func verify(_ password: String, against hash: String) async throws -> Bool {
        try await admitted { try await self.threads.runIfActive { Bcrypt.verify(password, hash: hash) } }
    }

    /// Spends the time a real check would, for an account that does not exist.
    func verifyDecoy(_ password: String) async throws {
        let existing = decoy.withLock { $0 }
        let hash: String
        if let existing {
            hash = existing
        } else {
            hash = try await self.hash(String(UInt64.random(in: .min ... .max), radix: 36))
            decoy.withLock { $0 = hash }
        }
        _ = try await verify(password, against: hash)
    }

    /// The 503 a request gets when every slot is taken.
    static let busy = Problem(
        .serviceUnavailable, code: .busy, detail: "The server is busy checking passwords; try again in a second.",
        headers: [.retryAfter: "1"]
    )

    private func admitted<Result: Sendable>(_ work: @Sendable () async throws -> Result) async throws -> Result {
        let admitted = inFlight.withLock { count in
            guard count < slots else { return false }
            count += 1
            return true
        }
        guard admitted else { throw Self.busy }
        defer { inFlight.withLock { $0 -= 1 } }
        return try await work()
    }

    func run() async throws {
        try? await gracefulShutdown()
        try await threads.shutdownGracefully()
    }
}
