/// How samples travel from a device to the server: in uploads of at most ``maximumCount`` samples each.
public enum HealthUploadBatch {
    /// The most samples one upload may carry: the server refuses a larger one, and a device reads HealthKit in batches
    /// no larger.
    public static let maximumCount = 1_000
}
