import HummingbirdBcrypt
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Hashes and checks passwords with bcrypt on its own threads, so a burst of sign-ins never blocks request handling
/// or the database's blocking pool.
final class PasswordHasher: Service {
    let cost: UInt8
    private let threads: NIOThreadPool
    /// A hash of a random password at `cost`, checked when the e-mail is unknown so both answers take as long.
    private let decoy = Mutex<String?>(nil)

    init(cost: UInt8, threadCount: Int = System.coreCount) {
        self.cost = cost
        self.threads = NIOThreadPool(numberOfThreads: max(1, threadCount))
        threads.start()
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await threads.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, against hash: String) async throws -> Bool {
        try await threads.runIfActive { Bcrypt.verify(password, hash: hash) }
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

    func run() async throws {
        try? await gracefulShutdown()
        try await threads.shutdownGracefully()
    }
}
