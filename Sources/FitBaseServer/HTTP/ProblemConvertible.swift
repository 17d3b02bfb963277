/// A domain error that knows the problem a client sees for it.
///
/// Stores and services throw these (a group that is full, an address already taken) without speaking HTTP; each
/// feature declares the mapping beside its error, and ``ProblemMapping`` renders it.
protocol ProblemConvertible: Error {
    /// The problem the client sees.
    var problem: Problem { get }
}
