import FitBaseCore
import Foundation
import Hummingbird
import SQLKit

/// The Catalog pages: workouts (search and filter, create, edit, delete — refused with the 409's message while a
/// program lists the workout), programs, and importing a catalog file with each record's problems shown beside it. Every
/// rule is the catalog's own: a workout is checked by ``CatalogImporter/workout(_:)`` as the admin API checks it, a file
/// by ``CatalogImporter/validate(_:)`` as `fitbase seed` checks it.
extension ConsoleFeature {
    func catalogList(_ request: Request, _ admin: ConsoleAdmin) async throws -> Response {
        let text = request.uri.queryParameters.get("q")?.trimmingCharacters(in: .whitespaces) ?? ""
        let type = request.uri.queryParameters.get("type").flatMap(WorkoutType.init(rawValue:))
        let access = request.uri.queryParameters.get("access") ?? ""
        var query = WorkoutQuery()
        query.sort = .title
        if !text.isEmpty { query.text = text }
        if let type { query.types = [type] }
        if access == "premium" { query.premium = true } else if access == "free" { query.premium = false }
        let (workouts, more) = try await catalog.store.workouts(matching: query, offset: 0, limit: 200)
        let programs = try await catalog.store.programs()
        var values: [String: Any] = [
            "query": text,
            "types": WorkoutType.allCases.map { ["value": $0.rawValue, "selected": $0 == type] },
            "accessOptions": [("", "Free and premium"), ("free", "Free only"), ("premium", "Premium only")].map { ["value": $0.0, "label": $0.1, "selected": $0.0 == access] },
            "workouts": workouts.map { workout -> [String: Any] in
                [
                    "id": workout.id.description, "title": workout.title, "type": workout.type.rawValue, "minutes": workout.durationMinutes,
                    "intensity": workout.intensity.rawValue, "premium": workout.isPremium, "featured": workout.isFeatured,
                ]
            },
            "count": workouts.count, "more": more,
            "programs": programs.map { program -> [String: Any] in
                [
                    "title": program.title, "level": program.level.rawValue, "weeks": program.weeks.count,
                    "workouts": program.weeks.reduce(0) { $0 + $1.count }, "premium": program.isPremium,
                ]
            },
        ]
        if let saved = request.uri.queryParameters.get("saved") { values["notice"] = "Workout \(saved) saved." }
        if let deleted = request.uri.queryParameters.get("deleted") { values["notice"] = "Workout \(deleted) deleted." }
        return try renderer.page("catalog", title: "Catalog", section: "/console/catalog", admin: admin, values)
    }

    func editWorkout(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let id = try Self.workoutID(context)
        guard let workout = try await catalog.store.workout(id) else { throw Problem.notFound("No workout \(id).") }
        return try workoutForm(WorkoutFields(workout), admin)
    }

    func workoutForm(_ fields: WorkoutFields?, _ admin: ConsoleAdmin, errors: [String: [String]] = [:], status: HTTPResponse.Status = .ok) throws -> Response {
        let fields = fields ?? WorkoutFields()
        func options<T: RawRepresentable & CaseIterable>(_ type: T.Type, _ chosen: [String], _ name: String) -> [[String: Any]] where T.RawValue == String {
            T.allCases.map { ["value": $0.rawValue, "checked": chosen.contains($0.rawValue), "name": name, "inputID": "\(name)-\($0.rawValue)"] }
        }
        func field(_ name: String) -> [String: Any] {
            ["errors": errors[name] ?? [], "invalid": errors[name] != nil]
        }
        let values: [String: Any] = [
            "isNew": fields.id == nil, "id": fields.id ?? "", "action": fields.id.map { "/console/catalog/workouts/\($0)" } ?? "/console/catalog/workouts",
            "titleValue": fields.title, "descriptionValue": fields.description, "minutes": fields.durationMinutes,
            "thumbnailURL": fields.thumbnailURL, "videoURL": fields.videoURL, "instructor": fields.instructorName,
            "tags": fields.tags.joined(separator: ", "), "benefits": fields.benefits.joined(separator: "\n"),
            "featured": fields.isFeatured, "premium": fields.isPremium,
            "types": WorkoutType.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == fields.type] },
            "intensities": Intensity.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == fields.intensity] },
            "phases": options(CyclePhase.self, fields.phases, "phases"),
            "equipment": options(Equipment.self, fields.equipment, "equipment"),
            "areas": options(TargetArea.self, fields.targetAreas, "targetAreas"),
            "hasErrors": !errors.isEmpty,
            "f": Dictionary(uniqueKeysWithValues: WorkoutFields.names.map { ($0, field($0)) }),
        ]
        return try renderer.page("workout", title: fields.id == nil ? "New workout" : "Edit \(fields.title)", section: "/console/catalog", admin: admin, status: status, values)
    }

    func saveWorkout(_ context: FitBaseRequestContext?, _ admin: ConsoleAdmin, _ form: ConsoleForm) async throws -> Response {
        let existing = try context.map(Self.workoutID)
        if let existing, try await catalog.store.workout(existing) == nil { throw Problem.notFound("No workout \(existing).") }
        let id: WorkoutID = existing ?? ids.make()
        var fields = WorkoutFields(form: form)
        fields.id = existing?.description
        let workout: CatalogWorkout
        do {
            workout = try CatalogImporter.workout(fields.record(id: id))
        } catch let invalid as CatalogImporter.InvalidRecord {
            var errors: [String: [String]] = [:]
            for problem in invalid.problems {
                let parts = problem.split(separator: ":", maxSplits: 1)
                let field = String(parts[0].split(separator: "[").first ?? parts[0])
                errors[field, default: []].append(parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : problem)
            }
            return try workoutForm(fields, admin, errors: errors, status: .unprocessableContent)
        }
        let now = clock.now
        let engine = database.engine
        try await database.transaction { db in
            try await CatalogStore.upsert(workout, engine: engine, now: now, on: db)
            try await OperatorAuditTrail.record(
                existing == nil ? .workoutCreated : .workoutUpdated, by: admin, target: "workout", id.description, detail: workout.title, now: now, on: db
            )
        }
        return ConsoleRenderer.redirect("/console/catalog?saved=\(id)")
    }

    func deleteWorkout(_ context: FitBaseRequestContext, _ admin: ConsoleAdmin) async throws -> Response {
        let id = try Self.workoutID(context)
        let now = clock.now
        let engine = database.engine
        let title = try await catalog.store.workout(id)?.title
        let deletions = catalog.deletions
        let deleted = try await database.transaction { db in
            guard try await CatalogStore.delete(id, engine: engine, deletions: deletions, now: now, on: db) else { return false }
            try await OperatorAuditTrail.record(.workoutDeleted, by: admin, target: "workout", id.description, detail: title, now: now, on: db)
            return true
        }
        guard deleted else { throw Problem.notFound("No workout \(id).") }
        return ConsoleRenderer.redirect("/console/catalog?deleted=\(id)")
    }

    func importForm(_ admin: ConsoleAdmin) throws -> Response {
        try renderer.page("import", title: "Import a catalog file", section: "/console/catalog", admin: admin)
    }

    /// Checks the file record by record; with any problem nothing is written and every record is listed with its own
    /// problems next to it (422), else the whole file is imported in one transaction with its audit entry.
    func importCatalog(_ admin: ConsoleAdmin, _ form: ConsoleForm) async throws -> Response {
        let text = form.text("file") ?? form.text("catalog") ?? ""
        guard !text.isEmpty else { throw Problem.validationFailed([.init(field: "file", message: "choose a catalog file (JSON) or paste one")]) }
        let validation = CatalogImporter.validate(Data(text.utf8))
        let records = validation.records.map { record -> [String: Any] in
            [
                "where": "\(record.collection)[\(record.index)]", "title": record.title, "problems": record.problems,
                "valid": record.problems.isEmpty,
            ]
        }
        guard let catalog = validation.catalog else {
            return try renderer.page("import", title: "Import a catalog file", section: "/console/catalog", admin: admin, status: .unprocessableContent, [
                "checked": true, "records": records, "fileProblems": validation.fileProblems,
                "problemCount": validation.records.filter { !$0.problems.isEmpty }.count + validation.fileProblems.count,
            ])
        }
        let now = clock.now
        let summary = "\(catalog.workouts.count) workout(s), \(catalog.programs.count) program(s)"
        try await CatalogImporter.importCatalog(catalog, into: database, now: now, alsoWrite: { db in
            try await OperatorAuditTrail.record(.catalogImported, by: admin, target: "catalog", "file", detail: summary, now: now, on: db)
        })
        return try renderer.page("import", title: "Catalog imported", section: "/console/catalog", admin: admin, [
            "imported": summary, "records": records,
        ])
    }

    static func workoutID(_ context: FitBaseRequestContext) throws(Problem) -> WorkoutID {
        guard let id = WorkoutID(parameter("workout", context)) else { throw Problem.notFound("No workout \(parameter("workout", context)).") }
        return id
    }
}

/// A workout as the console's form holds it: what was stored, or what was typed (kept, wrong parts and all, to show
/// again with the problems).
struct WorkoutFields: Sendable {
    static let names = ["title", "description", "type", "durationMinutes", "intensity", "phases", "equipment", "thumbnailURL", "videoURL", "instructorName", "tags", "targetAreas", "benefits"]

    var id: String?
    var title = ""
    var description = ""
    var type = WorkoutType.allCases.first?.rawValue ?? ""
    var durationMinutes = "30"
    var intensity = Intensity.allCases.first?.rawValue ?? ""
    var phases: [String] = []
    var equipment: [String] = []
    var thumbnailURL = ""
    var videoURL = ""
    var instructorName = ""
    var tags: [String] = []
    var isFeatured = false
    var isPremium = false
    var targetAreas: [String] = []
    var benefits: [String] = []

    init() {}

    init(_ workout: CatalogWorkout) {
        id = workout.id.description
        title = workout.title
        description = workout.description
        type = workout.type.rawValue
        durationMinutes = String(workout.durationMinutes)
        intensity = workout.intensity.rawValue
        phases = workout.phases.map(\.rawValue)
        equipment = workout.equipment.map(\.rawValue)
        thumbnailURL = workout.thumbnailURL
        videoURL = workout.videoURL
        instructorName = workout.instructorName
        tags = workout.tags
        isFeatured = workout.isFeatured
        isPremium = workout.isPremium
        targetAreas = workout.targetAreas.map(\.rawValue)
        benefits = workout.benefits
    }

    init(form: ConsoleForm) {
        title = form["title"] ?? ""
        description = form["description"] ?? ""
        type = form["type"] ?? ""
        durationMinutes = form["durationMinutes"]?.trimmingCharacters(in: .whitespaces) ?? ""
        intensity = form["intensity"] ?? ""
        phases = form.all("phases")
        equipment = form.all("equipment")
        thumbnailURL = form["thumbnailURL"]?.trimmingCharacters(in: .whitespaces) ?? ""
        videoURL = form["videoURL"]?.trimmingCharacters(in: .whitespaces) ?? ""
        instructorName = form["instructorName"] ?? ""
        tags = (form["tags"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        isFeatured = form["isFeatured"] != nil
        isPremium = form["isPremium"] != nil
        targetAreas = form.all("targetAreas")
        benefits = (form["benefits"] ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The record the catalog's rules check. A duration that is not a number is 0, which they refuse by name.
    func record(id: WorkoutID) -> CatalogFile.Workout {
        CatalogFile.Workout(
            id: id.description, title: title, description: description, type: type, durationMinutes: Int(durationMinutes) ?? 0,
            intensity: intensity, phases: phases, equipment: equipment, thumbnailURL: thumbnailURL, videoURL: videoURL,
            instructorName: instructorName, tags: tags, isFeatured: isFeatured, isPremium: isPremium, targetAreas: targetAreas,
            benefits: benefits
        )
    }
}
