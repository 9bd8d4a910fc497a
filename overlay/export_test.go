package overlay

// AssertNoEmptyHeadings is assertNoEmptyHeadings for the external tests.
var AssertNoEmptyHeadings = assertNoEmptyHeadings
