import FitBaseCore
import Foundation
import SQLKit

/// A catalog file: the demo catalog shipped with the server and what `fitbase seed --catalog` imports.
///
/// `{"workouts": [...], "programs": [...]}`; enum values are the API's, ids are UUIDs chosen by the file so that
/// importing again updates instead of duplicating.
struct CatalogFile: Decodable, Sendable {
    struct Workout: Decodable, Sendable {
        let id: String
        let title: String
        let description: String
        let type: String
        let durationMinutes: Int
        let intensity: String
        let phases: [String]
        let equipment: [String]
        let thumbnailURL: String
        let videoURL: String
        let instructorName: String
        let tags: [String]
        let isFeatured: Bool
        let isPremium: Bool
        let targetAreas: [String]
        let benefits: [String]
    }

    struct Program: Decodable, Sendable {
        struct Week: Decodable, Sendable {
            let week: Int
            let workoutIds: [String]
        }
        let id: String
        let title: String
        let description: String
        let level: String
        let isPremium: Bool
        let weeks: [Week]
    }

    let workouts: [Workout]
    let programs: [Program]
}

/// A catalog file checked record by record (``CatalogImporter/validate(_:)``).
struct CatalogValidation: Sendable {
    /// One workout or program of the file and what is wrong with it (nothing: it can be imported).
    struct Record: Sendable {
        let collection: String
        let index: Int
        let title: String
        let problems: [String]
    }

    let records: [Record]
    /// Problems of the file as a whole (not JSON, not a catalog, two records sharing an id).
    let fileProblems: [String]
    /// The catalog to import, when nothing is wrong.
    let catalog: (workouts: [CatalogWorkout], programs: [CatalogProgram])?
}

/// Validates catalog records, naming the record and field of every problem, and imports them idempotently.
enum CatalogImporter {
    /// A record that cannot be imported: `workouts[3] "Title": intensity …`.
    struct InvalidRecord: Error, CustomStringConvertible {
        let problems: [String]
        var description: String { problems.joined(separator: "\n") }
    }

    /// Parses and validates `data`; throws ``InvalidRecord`` listing every problem found.
    static func parse(_ data: Data) throws -> (workouts: [CatalogWorkout], programs: [CatalogProgram]) {
        let validation = validate(data)
        if let catalog = validation.catalog { return catalog }
        throw InvalidRecord(problems: validation.fileProblems + validation.records.flatMap { record in
            record.problems.map { "\(record.collection)[\(record.index)] \"\(record.title)\": \($0)" }
        })
    }

    /// Every record of a catalog file with the problems found in it, so each can be shown next to its record (the
    /// console's import); ``parse(_:)`` is this with the problems listed in one error.
    static func validate(_ data: Data) -> CatalogValidation {
        let file: CatalogFile
        do {
            file = try JSONDecoder().decode(CatalogFile.self, from: data)
        } catch let error as DecodingError {
            return CatalogValidation(records: [], fileProblems: [ProblemMapping.problem(forDecoding: error).detail ?? "not a catalog file"], catalog: nil)
        } catch {
            return CatalogValidation(records: [], fileProblems: ["not a catalog file"], catalog: nil)
        }
        var records: [CatalogValidation.Record] = []
        var workouts: [CatalogWorkout] = []
        for (index, raw) in file.workouts.enumerated() {
            do {
                workouts.append(try workout(raw))
                records.append(.init(collection: "workouts", index: index, title: raw.title, problems: []))
            } catch let error as InvalidRecord {
                records.append(.init(collection: "workouts", index: index, title: raw.title, problems: error.problems))
            } catch {
                records.append(.init(collection: "workouts", index: index, title: raw.title, problems: ["\(error)"]))
            }
        }
        let known = Set(workouts.map(\.id))
        var programs: [CatalogProgram] = []
        for (index, raw) in file.programs.enumerated() {
            var errors: [String] = []
            let id = ProgramID(raw.id)
            if id == nil { errors.append("id: \"\(raw.id)\" is not a UUID") }
            if raw.title.trimmingCharacters(in: .whitespaces).isEmpty { errors.append("title: must not be empty") }
            let level = FitnessLevel(rawValue: raw.level)
            if level == nil { errors.append("level: \"\(raw.level)\" is not one of \(FitnessLevel.allCases.map(\.rawValue).joined(separator: ", "))") }
            if raw.weeks.map(\.week) != Array(1...max(1, raw.weeks.count)) || raw.weeks.isEmpty {
                errors.append("weeks: must be numbered 1, 2, 3… in order")
            }
            var weeks: [[WorkoutID]] = []
            for (weekIndex, week) in raw.weeks.enumerated() {
                weeks.append(week.workoutIds.compactMap { text in
                    guard let workout = WorkoutID(text), known.contains(workout) else {
                        errors.append("weeks[\(weekIndex)].workoutIds: \"\(text)\" is not a workout of this file")
                        return nil
                    }
                    return workout
                })
            }
            if let id, let level, errors.isEmpty {
                programs.append(CatalogProgram(id: id, title: raw.title, description: raw.description, level: level, isPremium: raw.isPremium, weeks: weeks))
            }
            records.append(.init(collection: "programs", index: index, title: raw.title, problems: errors))
        }
        var fileProblems: [String] = []
        if Set(workouts.map(\.id)).count != workouts.count { fileProblems.append("workouts: two records share an id") }
        let valid = fileProblems.isEmpty && records.allSatisfy(\.problems.isEmpty)
        return CatalogValidation(records: records, fileProblems: fileProblems, catalog: valid ? (workouts, programs) : nil)
    }

    /// Writes everything in one transaction, stamped `now`; running it again with the same file changes nothing.
    static func importCatalog(
        _ catalog: (workouts: [CatalogWorkout], programs: [CatalogProgram]), into database: Database, now: Date,
        progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in },
        alsoWrite: @escaping @Sendable (any SQLDatabase) async throws -> Void = { _ in }
    ) async throws {
        let engine = database.engine
        let total = catalog.workouts.count + catalog.programs.count
        try await database.transaction { db in
            for (index, workout) in catalog.workouts.enumerated() {
                try await CatalogStore.upsert(workout, engine: engine, now: now, on: db)
                progress(index + 1, total)
            }
            for (index, program) in catalog.programs.enumerated() {
                try await CatalogStore.upsert(program, now: now, on: db)
                progress(catalog.workouts.count + index + 1, total)
            }
            try await alsoWrite(db)
        }
    }

    /// Checks one workout record; the same rules apply to the admin endpoints.
    static func workout(_ raw: CatalogFile.Workout) throws -> CatalogWorkout {
        var errors: [String] = []
        func enumValue<T: RawRepresentable & CaseIterable>(_ text: String, _ field: String, _ type: T.Type) -> T? where T.RawValue == String {
            if let value = T(rawValue: text) { return value }
            errors.append("\(field): \"\(text)\" is not one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        func enumList<T: RawRepresentable & CaseIterable & Hashable>(_ texts: [String], _ field: String, _ type: T.Type) -> [T] where T.RawValue == String {
            if texts.isEmpty { errors.append("\(field): must not be empty") }
            var seen = Set<T>()
            return texts.enumerated().compactMap { index, text in enumValue(text, "\(field)[\(index)]", T.self) }.filter { seen.insert($0).inserted }
        }
        let id = WorkoutID(raw.id)
        if id == nil { errors.append("id: \"\(raw.id)\" is not a UUID") }
        if raw.title.trimmingCharacters(in: .whitespaces).isEmpty || raw.title.count > 200 { errors.append("title: must be 1–200 characters") }
        if raw.description.count > 2_000 { errors.append("description: must be at most 2000 characters") }
        if !(1...300).contains(raw.durationMinutes) { errors.append("durationMinutes: must be between 1 and 300") }
        if raw.instructorName.trimmingCharacters(in: .whitespaces).isEmpty { errors.append("instructorName: must not be empty") }
        for (field, url) in [("thumbnailURL", raw.thumbnailURL), ("videoURL", raw.videoURL)] where !isWebURL(url) {
            errors.append("\(field): must be an http(s) URL")
        }
        let type = enumValue(raw.type, "type", WorkoutType.self)
        let intensity = enumValue(raw.intensity, "intensity", Intensity.self)
        let phases = enumList(raw.phases, "phases", CyclePhase.self)
        let equipment = enumList(raw.equipment, "equipment", Equipment.self)
        if equipment.contains(.none) && equipment.count > 1 { errors.append("equipment: \"none\" cannot be listed with other equipment") }
        let areas = enumList(raw.targetAreas, "targetAreas", TargetArea.self)
        guard let id, let type, let intensity, errors.isEmpty else { throw InvalidRecord(problems: errors) }
        return CatalogWorkout(
            id: id, title: raw.title.trimmingCharacters(in: .whitespaces), description: raw.description, type: type,
            durationMinutes: raw.durationMinutes, intensity: intensity, phases: phases, equipment: equipment,
            thumbnailURL: raw.thumbnailURL, videoURL: raw.videoURL, instructorName: raw.instructorName, tags: raw.tags,
            isFeatured: raw.isFeatured, isPremium: raw.isPremium, targetAreas: areas, benefits: raw.benefits
        )
    }

    private static func isWebURL(_ text: String) -> Bool {
        guard let url = URLComponents(string: text), ["http", "https"].contains(url.scheme?.lowercased()) else { return false }
        return url.host?.isEmpty == false
    }
}
