"""`flask --app app run` or `python app.py`: the app on the configured database."""

from sota_casino.factory import app_from_environment

app = app_from_environment()

if __name__ == "__main__":
    app.run(host="127.0.0.1", port=app.config["PORT"])
