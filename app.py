"""`flask --app app run` or `python app.py`: the app on the configured database."""

from sota_casino.factory import create_app

app = create_app()

if __name__ == "__main__":
    app.run(host="127.0.0.1", port=app.config["PORT"])
