import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// Runs a local-store operation, turning its failure into ``KitError/Kind/storage``.
func storage<T>(_ operation: () async throws -> T) async throws(KitError) -> T {
    do { return try await operation() } catch { throw KitError(.storage) }
}
