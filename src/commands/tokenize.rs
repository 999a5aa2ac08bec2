//! `tokenize`: a text's token ids and pieces.

use crate::error::CliError;
use decoding_engine::Model;

#[derive(clap::Args, Debug)]
pub struct TokenizeArgs {
    text: String,
    #[arg(long)]
    json: bool,
}

pub fn tokenize(model: &Model, a: TokenizeArgs) -> Result<(), CliError> {
    let ids = model.tokenizer.encode(&a.text, true)?;
    let tk = &model.tokenizer;
    let pieces: Vec<&str> = ids.iter().map(|&i| tk.piece(i)).collect::<Result<_, _>>()?;
    if a.json {
        println!("{}", serde_json::json!({ "ids": ids, "pieces": pieces }));
    } else {
        for (id, piece) in ids.iter().zip(pieces) {
            println!("{id}\t{piece:?}");
        }
    }
    Ok(())
}
