/// A workout's JSON is the contract's `Workout`: a ``CatalogWorkout/videoURL`` the caller may not see is absent there
/// (and `videoLocked` says why) and empty here.
extension CatalogWorkout: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, title, description, type, durationMinutes, intensity, phases, equipment, thumbnailURL, videoURL, videoLocked
        case instructorName, tags, isFeatured, isPremium, targetAreas, benefits
    }

    /// Reads the contract's `Workout`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(WorkoutID.self, forKey: .id), title: try container.decode(String.self, forKey: .title),
            description: try container.decode(String.self, forKey: .description), type: try container.decode(WorkoutType.self, forKey: .type),
            durationMinutes: try container.decode(Int.self, forKey: .durationMinutes),
            intensity: try container.decode(Intensity.self, forKey: .intensity), phases: try container.decode([CyclePhase].self, forKey: .phases),
            equipment: try container.decode([Equipment].self, forKey: .equipment),
            thumbnailURL: try container.decode(String.self, forKey: .thumbnailURL),
            videoURL: try container.decodeIfPresent(String.self, forKey: .videoURL) ?? "",
            instructorName: try container.decode(String.self, forKey: .instructorName), tags: try container.decode([String].self, forKey: .tags),
            isFeatured: try container.decode(Bool.self, forKey: .isFeatured), isPremium: try container.decode(Bool.self, forKey: .isPremium),
            targetAreas: try container.decode([TargetArea].self, forKey: .targetAreas),
            benefits: try container.decode([String].self, forKey: .benefits)
        )
    }

    /// Writes the contract's `Workout`: a premium workout without its video is a locked one.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(description, forKey: .description)
        try container.encode(type, forKey: .type)
        try container.encode(durationMinutes, forKey: .durationMinutes)
        try container.encode(intensity, forKey: .intensity)
        try container.encode(phases, forKey: .phases)
        try container.encode(equipment, forKey: .equipment)
        try container.encode(thumbnailURL, forKey: .thumbnailURL)
        if !videoURL.isEmpty { try container.encode(videoURL, forKey: .videoURL) }
        try container.encode(isPremium && videoURL.isEmpty, forKey: .videoLocked)
        try container.encode(instructorName, forKey: .instructorName)
        try container.encode(tags, forKey: .tags)
        try container.encode(isFeatured, forKey: .isFeatured)
        try container.encode(isPremium, forKey: .isPremium)
        try container.encode(targetAreas, forKey: .targetAreas)
        try container.encode(benefits, forKey: .benefits)
    }
}
