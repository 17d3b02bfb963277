import Foundation
import FitBaseCore

/// A validated catalog file, ready to write: what `fitbase seed --catalog` uses.
package struct CatalogImport: Sendable {
    private let catalog: (workouts: [FitBaseCore.CatalogWorkout], programs: [FitBaseCore.CatalogProgram])

    /// Parses and validates; the error lists every invalid record with its index, title and field.
    package init(data: Data) throws {
        catalog = try CatalogImporter.parse(data)
    }

    package var workoutCount: Int { catalog.workouts.count }
    package var programCount: Int { catalog.programs.count }
    package var recordCount: Int { workoutCount + programCount }

    /// Creates or updates every record in one transaction, stamped `now`, reporting `(done, total)` as it goes.
    package func write(into database: Database, now: Date, progress: @escaping @Sendable (Int, Int) -> Void) async throws {
        try await CatalogImporter.importCatalog(catalog, into: database, now: now, progress: progress)
    }
}
