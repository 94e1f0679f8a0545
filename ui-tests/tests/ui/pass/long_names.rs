// Very long type, handler and field names compile, with typed helpers.
#![deny(warnings)]
use tapio::prelude::*;
#[message]
pub struct AVeryLongMessageNameThatGoesOnAndOnAndOnForAWhileBecauseSomeoneLikesDescriptiveNamesInTheirProtocolsAndKeepsTypingMoreWordsUntilItIsSillyButStillValidRustCode
{
    pub field_with_a_rather_long_name_as_well_because_why_not: u64,
}
pub struct AnActorWhoseNameIsAlsoRatherLongBecauseConsistencyMattersInThisCodebaseAndEveryoneAgreed;
#[actor(helpers)]
impl AnActorWhoseNameIsAlsoRatherLongBecauseConsistencyMattersInThisCodebaseAndEveryoneAgreed {
    fn a_handler_whose_name_is_long_enough_to_wrap_around_the_screen_of_a_laptop_in_most_editors_today(
        &mut self,
        _: AVeryLongMessageNameThatGoesOnAndOnAndOnForAWhileBecauseSomeoneLikesDescriptiveNamesInTheirProtocolsAndKeepsTypingMoreWordsUntilItIsSillyButStillValidRustCode,
    ) {
    }
}
fn main() {}
