import FitBaseCore
import Foundation

@testable import FitBaseServer

extension LocalCalendar {
    /// Today in `timeZone` by the machine's clock: what an application on the system's clock takes for today.
    static func today(in timeZone: String?) -> CalendarDay {
        day(of: .now, in: timeZone)
    }
}
