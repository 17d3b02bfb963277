import FitBaseAPI
import FitBaseCore
import Foundation

/// The wire form of the catalog: Core's values to the contract's types and back, mapped in this one place for controllers,
/// collections and owners alike.
enum CatalogWire {
    static func wire(_ workout: CatalogWorkout, entitled: Bool) -> Components.Schemas.Workout {
        let locked = workout.isPremium && !entitled
        return .init(
            id: workout.id.description, title: workout.title, description: workout.description,
            _type: workout.type, durationMinutes: workout.durationMinutes,
            intensity: workout.intensity,
            phases: workout.phases,
            equipment: workout.equipment,
            thumbnailURL: workout.thumbnailURL, videoURL: locked ? nil : workout.videoURL, videoLocked: locked,
            instructorName: workout.instructorName, tags: workout.tags, isFeatured: workout.isFeatured,
            isPremium: workout.isPremium, targetAreas: workout.targetAreas,
            benefits: workout.benefits
        )
    }

    /// A listing's order as the query names it, case by case (the compiler holds the two lists equal).
    static func sort(_ sort: Operations.ListWorkouts.Input.Query.SortPayload) -> WorkoutSort {
        switch sort {
        case .featured: .featured
        case .newest: .newest
        case .title: .title
        case .shortest: .shortest
        case .longest: .longest
        }
    }

    static func wire(_ program: CatalogProgram) -> Components.Schemas.Program {
        .init(
            id: program.id.description, title: program.title, description: program.description,
            level: program.level, isPremium: program.isPremium,
            weeks: program.weeks.enumerated().map { .init(week: $0.offset + 1, workoutIds: $0.element.map(\.description)) }
        )
    }
}
