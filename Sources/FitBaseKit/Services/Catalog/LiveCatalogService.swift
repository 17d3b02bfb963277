import FitBaseAPI
import FitBaseClient
import FitBaseCore
import Foundation

/// ``CatalogService`` over ``listWorkouts``, ``listFeaturedWorkouts``, ``getWorkout``, ``listPrograms`` and
/// ``getProgram``, cache-first (see ``ResponseCache``): the library opens offline with what was seen last, and a copy
/// is revalidated with its entity tag.
public struct LiveCatalogService: CatalogService {
    let client: FitBaseClient
    let cache: ResponseCache
    let ttl: Duration

    init(client: FitBaseClient, cache: ResponseCache, ttl: Duration) {
        self.client = client
        self.cache = cache
        self.ttl = ttl
    }

    public func workouts(
        matching filter: WorkoutFilter, page: PageRequest, policy: CachePolicy
    ) async throws(KitError) -> Loaded<Page<CatalogWorkout>> {
        let search = filter.search?.trimmingCharacters(in: .whitespaces)
        let query = Operations.ListWorkouts.Input.Query(
            _type: filter.types.isEmpty ? nil : filter.types.sorted { $0.rawValue < $1.rawValue }, intensity: filter.intensity,
            phase: filter.phase, equipment: filter.equipment.isEmpty ? nil : filter.equipment.sorted { $0.rawValue < $1.rawValue },
            minDuration: filter.minDuration, maxDuration: filter.maxDuration, targetArea: filter.targetArea,
            featured: filter.featuredOnly ? true : nil, premium: filter.premium, q: search?.isEmpty == false ? search : nil,
            sort: .init(rawValue: filter.sort.rawValue), limit: page.limit, cursor: page.cursor
        )
        let client = self.client
        let loaded = try await cache.load(Components.Schemas.WorkoutPage.self, key: Self.key(query), ttl: ttl, policy: policy) {
            etag async throws(FitBaseError) in
            try await client.call {
                let output = try await client.api.listWorkouts(query: query, headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ok.body.json, etag: ok.headers.eTag)
            }
        }
        return loaded.map { page in Page(items: page.items.compactMap(CatalogWorkout.init(wire:)), nextCursor: page.nextCursor) }
    }

    /// Where a list's answer is kept: its query's parameters, in the order the server reads them.
    static func key(_ query: Operations.ListWorkouts.Input.Query) -> String {
        var parts: [String] = (query._type ?? []).map { "type=\($0.rawValue)" }
        if let intensity = query.intensity { parts.append("intensity=\(intensity.rawValue)") }
        if let phase = query.phase { parts.append("phase=\(phase.rawValue)") }
        parts += (query.equipment ?? []).map { "equipment=\($0.rawValue)" }
        if let minimum = query.minDuration { parts.append("minDuration=\(minimum)") }
        if let maximum = query.maxDuration { parts.append("maxDuration=\(maximum)") }
        if let area = query.targetArea { parts.append("targetArea=\(area.rawValue)") }
        if query.featured == true { parts.append("featured=true") }
        if let premium = query.premium { parts.append("premium=\(premium)") }
        if let search = query.q { parts.append("q=\(search)") }
        if let sort = query.sort { parts.append("sort=\(sort.rawValue)") }
        if let limit = query.limit { parts.append("limit=\(limit)") }
        if let cursor = query.cursor { parts.append("cursor=\(cursor)") }
        return "catalog:list?" + parts.joined(separator: "&")
    }

    public func featured(policy: CachePolicy) async throws(KitError) -> Loaded<[CatalogWorkout]> {
        let client = self.client
        let loaded = try await cache.load(Components.Schemas.WorkoutPage.self, key: "catalog:featured", ttl: ttl, policy: policy) {
            etag async throws(FitBaseError) in
            try await client.call {
                let output = try await client.api.listFeaturedWorkouts(headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ok.body.json, etag: ok.headers.eTag)
            }
        }
        return loaded.map { page in page.items.compactMap(CatalogWorkout.init(wire:)) }
    }

    public func workout(id: WorkoutID, policy: CachePolicy) async throws(KitError) -> Loaded<WorkoutDetail> {
        let client = self.client
        let loaded = try await cache.load(Components.Schemas.Workout.self, key: "catalog:workout:\(id)", ttl: ttl, policy: policy) {
            etag async throws(FitBaseError) in
            try await client.call {
                let output = try await client.api.getWorkout(path: .init(workoutId: id.description), headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ok.body.json, etag: ok.headers.eTag)
            }
        }
        guard let workout = CatalogWorkout(wire: loaded.value) else { throw KitError(.server) }
        return loaded.map { wire in WorkoutDetail(workout: workout, isVideoLocked: wire.videoLocked) }
    }

    public func programs(page: PageRequest, policy: CachePolicy) async throws(KitError) -> Loaded<Page<CatalogProgram>> {
        let client = self.client
        let key = "catalog:programs?limit=\(page.limit)" + (page.cursor.map { "&cursor=\($0)" } ?? "")
        let loaded = try await cache.load(Components.Schemas.ProgramList.self, key: key, ttl: ttl, policy: policy) {
            etag async throws(FitBaseError) in
            try await client.call {
                let output = try await client.api.listPrograms(
                    query: .init(limit: page.limit, cursor: page.cursor), headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ok.body.json, etag: ok.headers.eTag)
            }
        }
        var programs: [CatalogProgram] = []
        for item in loaded.value.items { programs.append(try CatalogProgram(wire: item)) }
        return loaded.map { [programs] list in Page(items: programs, nextCursor: list.nextCursor) }
    }

    public func program(id: ProgramID, policy: CachePolicy) async throws(KitError) -> Loaded<CatalogProgram> {
        let client = self.client
        let loaded = try await cache.load(Components.Schemas.Program.self, key: "catalog:program:\(id)", ttl: ttl, policy: policy) {
            etag async throws(FitBaseError) in
            try await client.call {
                let output = try await client.api.getProgram(path: .init(programId: id.description), headers: .init(ifNoneMatch: etag))
                if case .notModified = output { return .notModified }
                let ok = try output.ok
                return .fresh(try ok.body.json, etag: ok.headers.eTag)
            }
        }
        let program = try CatalogProgram(wire: loaded.value)
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
        self.init(
            id: try ProgramID(wire: program.id), title: program.title, description: program.description, level: program.level,
            isPremium: program.isPremium, weeks: weeks)
    }
}
