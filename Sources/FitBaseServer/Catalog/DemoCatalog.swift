import Foundation
import Logging

/// The realistic demo catalog shipped with the server, loaded into an empty catalog on start so a fresh
/// `fitbase serve` has something to browse.
enum DemoCatalog {
    static func loadIfEmpty(into database: Database, now: Date, logger: Logger) async throws {
        guard try await CatalogStore(database: database).isEmpty() else { return }
        guard let url = Bundle.fitBaseServerResources.url(forResource: "demo-catalog", withExtension: "json") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "demo-catalog.json (FitBaseServer resource bundle)"])
        }
        let catalog = try CatalogImporter.parse(try Data(contentsOf: url))
        try await CatalogImporter.importCatalog(catalog, into: database, now: now)
        logger.info("loaded the demo catalog", metadata: ["workouts": "\(catalog.workouts.count)", "programs": "\(catalog.programs.count)"])
    }
}

extension Bundle {
    /// The server module's resources (the demo catalog), for tools and tests.
    static var fitBaseServerResources: Bundle { .module }
}
