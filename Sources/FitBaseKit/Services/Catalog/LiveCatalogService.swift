import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation
import HTTPTypes

/// ``CatalogService`` over `/v1/workouts`, cache-first (see ``ResponseCache``): the library opens offline with what was
/// seen last.
public struct LiveCatalogService: CatalogService {
    let api: ServerAPI
    let cache: ResponseCache
    let ttl: Duration

    public func workouts(matching filter: WorkoutFilter, page: PageRequest, policy: CachePolicy) async throws(KitError) -> Loaded<Page<CatalogWorkout>> {
        var query: [URLQueryItem] = filter.types.map(\.rawValue).sorted().map { URLQueryItem(name: "type", value: $0) }
        if let intensity = filter.intensity { query.append(.init(name: "intensity", value: intensity.rawValue)) }
        if let phase = filter.phase { query.append(.init(name: "phase", value: phase.rawValue)) }
        query += filter.equipment.map(\.rawValue).sorted().map { URLQueryItem(name: "equipment", value: $0) }
        if let minimum = filter.minDuration { query.append(.init(name: "minDuration", value: String(minimum))) }
        if let maximum = filter.maxDuration { query.append(.init(name: "maxDuration", value: String(maximum))) }
        if let area = filter.targetArea { query.append(.init(name: "targetArea", value: area.rawValue)) }
        if filter.featuredOnly { query.append(.init(name: "featured", value: "true")) }
        if let premium = filter.premium { query.append(.init(name: "premium", value: premium ? "true" : "false")) }
        if let search = filter.search?.trimmingCharacters(in: .whitespaces), !search.isEmpty { query.append(.init(name: "q", value: search)) }
        query.append(.init(name: "sort", value: filter.sort.rawValue))
        query.append(.init(name: "limit", value: String(page.limit)))
        if let cursor = page.cursor { query.append(.init(name: "cursor", value: cursor)) }
        let key = "catalog:list?" + query.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
        let loaded = try await cache.get("/v1/workouts", query: query, operationID: "listWorkouts", key: key, ttl: ttl, policy: policy)
        let wire = try WireCoding.decode(Components.Schemas.WorkoutPage.self, from: loaded.value)
        return loaded.map { _ in Page(items: wire.items.compactMap(CatalogWorkout.init(wire:)), nextCursor: wire.nextCursor) }
    }

    public func featured(policy: CachePolicy) async throws(KitError) -> Loaded<[CatalogWorkout]> {
        let loaded = try await cache.get("/v1/workouts/featured", operationID: "listFeaturedWorkouts", key: "catalog:featured", ttl: ttl, policy: policy)
        let wire = try WireCoding.decode(Components.Schemas.WorkoutPage.self, from: loaded.value)
        return loaded.map { _ in wire.items.compactMap(CatalogWorkout.init(wire:)) }
    }

    public func workout(id: WorkoutID, policy: CachePolicy) async throws(KitError) -> Loaded<WorkoutDetail> {
        let loaded = try await cache.get(
            "/v1/workouts/\(id)", operationID: "getWorkout", key: "catalog:workout:\(id)", ttl: ttl, policy: policy)
        let wire = try WireCoding.decode(Components.Schemas.Workout.self, from: loaded.value)
        guard let workout = CatalogWorkout(wire: wire) else { throw KitError(.server) }
        return loaded.map { _ in WorkoutDetail(workout: workout, isVideoLocked: wire.videoLocked) }
    }

    public func programs(page: PageRequest, policy: CachePolicy) async throws(KitError) -> Loaded<Page<CatalogProgram>> {
        var query = [URLQueryItem(name: "limit", value: String(page.limit))]
        if let cursor = page.cursor { query.append(.init(name: "cursor", value: cursor)) }
        let key = "catalog:programs?" + query.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
        let loaded = try await cache.get("/v1/programs", query: query, operationID: "listPrograms", key: key, ttl: ttl, policy: policy)
        let wire = try WireCoding.decode(Components.Schemas.ProgramList.self, from: loaded.value)
        var programs: [CatalogProgram] = []
        for item in wire.items { programs.append(try CatalogProgram(wire: item)) }
        return loaded.map { [programs] _ in Page(items: programs, nextCursor: wire.nextCursor) }
    }

    public func program(id: ProgramID, policy: CachePolicy) async throws(KitError) -> Loaded<CatalogProgram> {
        let loaded = try await cache.get("/v1/programs/\(id)", operationID: "getProgram", key: "catalog:program:\(id)", ttl: ttl, policy: policy)
        let program = try CatalogProgram(wire: WireCoding.decode(Components.Schemas.Program.self, from: loaded.value))
        return loaded.map { _ in program }
    }
}

extension CatalogProgram {
    /// The program an answer holds, its weeks in order; an id that is not an id is the server's fault.
    init(wire program: Components.Schemas.Program) throws(KitError) {
        var weeks: [[WorkoutID]] = []
        for week in program.weeks.sorted(by: { $0.week < $1.week }) {
            var ids: [WorkoutID] = []
            for text in week.workoutIds { ids.append(try WorkoutID(wire: text)) }
            weeks.append(ids)
        }
        self.init(id: try ProgramID(wire: program.id), title: program.title, description: program.description, level: program.level, isPremium: program.isPremium, weeks: weeks)
    }
}
