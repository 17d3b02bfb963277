import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes

/// Browsing the catalog (open to everyone) and managing it (administrators).
protocol CatalogOperations: FeatureOperations { var catalogFeature: CatalogFeature { get } }

extension CatalogOperations {
    /// The workout reads answered before the generated handler, for ``RoutingTransport``.
    var catalogRoutes: [DirectRoute] { catalogFeature.responses.routes }

    func listWorkouts(_ input: Operations.ListWorkouts.Input) async throws -> Operations.ListWorkouts.Output {
        let q = input.query
        if let minimum = q.minDuration, let maximum = q.maxDuration, minimum > maximum {
            throw Problem.invalidRequest(
                "minDuration must not exceed maxDuration.", fieldErrors: [.init(field: "minDuration", message: "must not exceed maxDuration")]
            )
        }
        let query = WorkoutQuery(
            types: q._type ?? [],
            intensity: q.intensity,
            phase: q.phase,
            equipment: q.equipment.map(Set.init),
            minDuration: q.minDuration, maxDuration: q.maxDuration,
            targetArea: q.targetArea,
            featured: q.featured, premium: q.premium, text: q.q,
            sort: q.sort.map(CatalogWire.sort) ?? .featured
        )
        return .ok(.init(body: .json(try await page(query, limit: q.limit, cursor: q.cursor))))
    }

    func listFeaturedWorkouts(_ input: Operations.ListFeaturedWorkouts.Input) async throws -> Operations.ListFeaturedWorkouts.Output {
        let query = WorkoutQuery(featured: true, sort: .title)
        return .ok(.init(body: .json(try await page(query, limit: input.query.limit, cursor: input.query.cursor))))
    }

    func listWorkoutsForPhase(_ input: Operations.ListWorkoutsForPhase.Input) async throws -> Operations.ListWorkoutsForPhase.Output {
        let query = WorkoutQuery(phase: input.path.phase, sort: .featured)
        return .ok(.init(body: .json(try await page(query, limit: input.query.limit, cursor: input.query.cursor))))
    }

    func getWorkout(_ input: Operations.GetWorkout.Input) async throws -> Operations.GetWorkout.Output {
        guard let id = WorkoutID(input.path.workoutId), let workout = try await catalogFeature.store.workout(id) else {
            throw Problem.notFound("No workout \(input.path.workoutId).")
        }
        let entitled = try await catalogFeature.premiumAccess.isEntitled(RequestScope.current.caller)
        return .ok(.init(body: .json(CatalogWire.wire(workout, entitled: entitled))))
    }

    func listPrograms(_ input: Operations.ListPrograms.Input) async throws -> Operations.ListPrograms.Output {
        let limit = try PageRequest.limit(input.query.limit)
        let offset = try input.query.cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let programs = try await catalogFeature.store.programs()
        let page = programs.dropFirst(offset).prefix(limit)
        return .ok(.init(body: .json(.init(
            items: page.map(CatalogWire.wire), nextCursor: programs.count - min(offset, programs.count) > limit ? PageRequest.cursor(offset: offset + limit) : nil
        ))))
    }

    func getProgram(_ input: Operations.GetProgram.Input) async throws -> Operations.GetProgram.Output {
        guard let id = ProgramID(input.path.programId), let program = try await catalogFeature.store.program(id) else {
            throw Problem.notFound("No program \(input.path.programId).")
        }
        return .ok(.init(body: .json(CatalogWire.wire(program))))
    }

    // MARK: Administration

    func createWorkout(_ input: Operations.CreateWorkout.Input) async throws -> Operations.CreateWorkout.Output {
        try Self.requireAdmin()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        let workout = try Self.validated(body, id: ids.make())
        try await catalogFeature.store.save(workout, now: clock.now)
        return .created(.init(body: .json(CatalogWire.wire(workout, entitled: true))))
    }

    func replaceWorkout(_ input: Operations.ReplaceWorkout.Input) async throws -> Operations.ReplaceWorkout.Output {
        try Self.requireAdmin()
        guard case .json(let body) = input.body else { throw Problem.invalidRequest("Expected a JSON body.") }
        guard let id = WorkoutID(input.path.workoutId), try await catalogFeature.store.workout(id) != nil else {
            throw Problem.notFound("No workout \(input.path.workoutId).")
        }
        let workout = try Self.validated(body, id: id)
        try await catalogFeature.store.save(workout, now: clock.now)
        return .ok(.init(body: .json(CatalogWire.wire(workout, entitled: true))))
    }

    func deleteWorkout(_ input: Operations.DeleteWorkout.Input) async throws -> Operations.DeleteWorkout.Output {
        try Self.requireAdmin()
        guard let id = WorkoutID(input.path.workoutId) else { throw Problem.notFound("No workout \(input.path.workoutId).") }
        let (engine, deletions, now) = (catalogFeature.database.engine, catalogFeature.deletions, clock.now)
        let deleted = try await catalogFeature.database.transaction { db in
            try await CatalogStore.delete(id, engine: engine, deletions: deletions, now: now, on: db)
        }
        guard deleted else { throw Problem.notFound("No workout \(input.path.workoutId).") }
        return .noContent(.init())
    }

    // MARK: Helpers

    private func page(_ query: WorkoutQuery, limit: Int?, cursor: String?) async throws -> Components.Schemas.WorkoutPage {
        let limit = try PageRequest.limit(limit)
        let offset = try cursor.map(PageRequest.offset(fromCursor:)) ?? 0
        let (workouts, hasMore) = try await catalogFeature.store.workouts(matching: query, offset: offset, limit: limit)
        let entitled = try await catalogFeature.premiumAccess.isEntitled(RequestScope.current.caller)
        return .init(
            items: workouts.map { CatalogWire.wire($0, entitled: entitled) },
            nextCursor: hasMore ? PageRequest.cursor(offset: offset + limit) : nil
        )
    }

    private static func requireAdmin() throws(Problem) {
        guard try RequestScope.requireCaller().role == .admin else {
            throw Problem(.forbidden, code: .forbidden, detail: "Managing the catalog needs the admin role.")
        }
    }

    private static func validated(_ input: Components.Schemas.WorkoutInput, id: WorkoutID) throws(Problem) -> CatalogWorkout {
        let raw = CatalogFile.Workout(
            id: id.description, title: input.title, description: input.description, type: input._type.rawValue,
            durationMinutes: input.durationMinutes, intensity: input.intensity.rawValue, phases: input.phases.map(\.rawValue),
            equipment: input.equipment.map(\.rawValue), thumbnailURL: input.thumbnailURL, videoURL: input.videoURL,
            instructorName: input.instructorName, tags: input.tags, isFeatured: input.isFeatured, isPremium: input.isPremium,
            targetAreas: input.targetAreas.map(\.rawValue), benefits: input.benefits
        )
        do {
            return try CatalogImporter.workout(raw)
        } catch let error as CatalogImporter.InvalidRecord {
            throw .validationFailed(error.problems.map { problem in
                let parts = problem.split(separator: ":", maxSplits: 1)
                return .init(field: String(parts[0]), message: parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : problem)
            })
        } catch {
            throw .internalError
        }
    }

}
