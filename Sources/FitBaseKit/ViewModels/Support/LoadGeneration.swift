/// Tells the latest of overlapping loads apart from the ones it superseded: each load takes a ticket, and only the
/// holder of the newest ticket may write its result to the screen (a slow earlier load never overwrites a newer one).
struct LoadGeneration {
    private var latest = 0

    /// A ticket for a new load, superseding every earlier one.
    mutating func next() -> Int {
        latest += 1
        return latest
    }

    /// Whether `ticket` is still the newest.
    func isCurrent(_ ticket: Int) -> Bool { ticket == latest }
}
