import FitBaseAPI
import FitBaseCore
import Foundation

/// How the catalog cross the wire: Core's values to the contract's types and back. The one place they are mapped; controllers,
/// collections and owners all call these.
enum CatalogWire {
    static func wire(_ workout: CatalogWorkout, entitled: Bool) -> Components.Schemas.Workout {
        let locked = workout.isPremium && !entitled
        return .init(
            id: workout.id.description, title: workout.title, description: workout.description,
            _type: .init(rawValue: workout.type.rawValue) ?? .strength, durationMinutes: workout.durationMinutes,
            intensity: .init(rawValue: workout.intensity.rawValue) ?? .medium,
            phases: workout.phases.compactMap { .init(rawValue: $0.rawValue) },
            equipment: workout.equipment.compactMap { .init(rawValue: $0.rawValue) },
            thumbnailURL: workout.thumbnailURL, videoURL: locked ? nil : workout.videoURL, videoLocked: locked,
            instructorName: workout.instructorName, tags: workout.tags, isFeatured: workout.isFeatured,
            isPremium: workout.isPremium, targetAreas: workout.targetAreas.compactMap { .init(rawValue: $0.rawValue) },
            benefits: workout.benefits
        )
    }

    static func wire(_ program: CatalogProgram) -> Components.Schemas.Program {
        .init(
            id: program.id.description, title: program.title, description: program.description,
            level: .init(rawValue: program.level.rawValue) ?? .beginner, isPremium: program.isPremium,
            weeks: program.weeks.enumerated().map { .init(week: $0.offset + 1, workoutIds: $0.element.map(\.description)) }
        )
    }
}
